//! Behaviour of the loaded Android plugin against fake devices behind a
//! real adb server: discovery in every state, observation, exact input
//! command lines, secrets on stdin only, semantic Actions, vanishing
//! devices, deadlines.

mod support;

use std::time::{Duration, Instant};

use devicerail_host_android_fake_adb::{
    Availability, DeviceProfile, FakeConfig, InputSource, Screen,
};
use devicerail_host_plugin_api::protocol::{
    ActionExecution, CoordinateFallbackReason, DeviceId, ErrorCode, UiNode,
};
use devicerail_host_plugin_api::{CallContext, Driver, DriverObservation, ObserveRequest, UiTree};
use devicerail_host_testing::call;
use serde_json::{Value, json};

use support::ctx;

const BOTH: ObserveRequest = ObserveRequest {
    screenshot: true,
    ui_tree: true,
    live: None,
};
const TREE: ObserveRequest = ObserveRequest {
    screenshot: false,
    ui_tree: true,
    live: None,
};

fn tree(obs: &DriverObservation) -> &UiTree {
    obs.ui_tree.as_ref().expect("a UI tree")
}

fn node<'t>(tree: &'t UiTree, identifier_suffix: &str) -> &'t UiNode {
    tree.nodes
        .iter()
        .find(|n| {
            n.identifier
                .as_deref()
                .is_some_and(|i| i.ends_with(&format!(":id/{identifier_suffix}")))
        })
        .unwrap_or_else(|| panic!("no node {identifier_suffix}"))
}

fn center(n: &UiNode) -> (u32, u32) {
    let (x, y) = n.bounds.expect("bounds").center();
    (x as u32, y as u32)
}

/// The command lines the fake ran, without the exit marker.
fn commands(fake: &devicerail_host_android_fake_adb::FakeAdbDevice) -> Vec<String> {
    fake.command_lines()
        .into_iter()
        .map(|c| c.trim_end_matches("; echo __rc=$?").to_owned())
        .collect()
}

fn code_of<T: std::fmt::Debug>(r: Result<T, devicerail_host_plugin_api::DriverError>) -> String {
    match r {
        Err(e) => e.code.into(),
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn discovery_lists_every_state_and_refuses_unusable_devices() {
    let Some(server) = support::server() else {
        return;
    };
    let (_online, online) = support::online(&server);
    let (_unauth, unauthorized) = support::attach(
        &server,
        FakeConfig {
            availability: Availability::Unauthorized,
            ..FakeConfig::default()
        },
    );
    let (_off, offline) = support::attach(
        &server,
        FakeConfig {
            availability: Availability::Offline,
            ..FakeConfig::default()
        },
    );
    let plugin = support::plugin(&server);
    let list = plugin.list_devices(&ctx()).expect("listing");
    assert_eq!(list.len(), 3, "{list:?}");
    let find = |s: &str| list.iter().find(|d| d.id.as_str() == s).expect("listed");
    let d = find(&online);
    assert_eq!(d.name, "Fake Pixel");
    assert_eq!(d.os_version.as_deref(), Some("14"));
    assert!(!d.connected);
    assert_eq!(
        serde_json::to_value(&d.platform).expect("json"),
        json!({ "kind": "android" })
    );
    // States are not names: an unusable device is named by its serial
    // (its model is unknown) and says why when it is used.
    let u = find(&unauthorized);
    assert!(!u.connected);
    assert_eq!(u.name, unauthorized);
    let o = find(&offline);
    assert!(!o.connected);
    assert_eq!(o.name, offline);

    let e = plugin
        .connect(&ctx(), &DeviceId::new(unauthorized.clone()))
        .expect_err("unauthorized cannot connect");
    assert_eq!(e.code, ErrorCode::DeviceUnavailable.as_str());
    assert!(e.retryable);
    assert!(e.message.contains("USB debugging prompt"), "{}", e.message);
    assert_eq!(
        e.details,
        json!({ "deviceId": unauthorized, "reason": "unauthorized" })
    );
    // Exactly the keys the host passes on for this code.
    assert_eq!(
        ErrorCode::DeviceUnavailable.filtered_details(e.details.clone()),
        e.details
    );
    let e = plugin
        .connect(&ctx(), &DeviceId::new(offline.clone()))
        .expect_err("offline cannot connect");
    assert_eq!(e.code, ErrorCode::DeviceUnavailable.as_str());
    assert_eq!(e.details["reason"], json!("offline"));

    let info = plugin
        .connect(&ctx(), &DeviceId::new(online.clone()))
        .expect("online connects");
    assert!(info.connected);
    let again = plugin.list_devices(&ctx()).expect("listing");
    assert!(again.iter().any(|d| d.id.as_str() == online && d.connected));
    assert!(
        plugin
            .health(&ctx(), &DeviceId::new(online))
            .expect("health")
            .healthy
    );
    assert!(
        !plugin
            .health(&ctx(), &DeviceId::new(unauthorized))
            .expect("health")
            .healthy
    );
}

#[test]
fn observe_returns_a_matching_screenshot_and_a_normalized_tree() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial.clone());
    plugin.connect(&ctx(), &device).expect("connects");
    let obs = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert_eq!((obs.viewport.width, obs.viewport.height), (720, 1280));
    assert!((obs.viewport.scale_factor - 2.0).abs() < 1e-9);
    let img = image::load_from_memory(obs.png.as_deref().expect("png")).expect("decodes");
    assert_eq!((img.width(), img.height()), (720, 1280));
    // The sign-in button is painted where the tree says it is.
    let t = tree(&obs);
    let sign_in = node(t, "sign_in");
    let (x, y) = center(sign_in);
    assert_eq!(img.to_rgb8().get_pixel(x, y).0, [30, 100, 220]);
    assert_eq!(t.context.context_id.as_str(), "com.example.login");
    assert_eq!(t.root_stable_node_ids, vec!["0".to_owned()]);
    assert_eq!(sign_in.role.as_str(), "button");
    assert_eq!(sign_in.name.as_deref(), Some("Sign in"));
    assert_eq!(sign_in.stable_node_id.as_str(), "0.0.4#sign_in");
    assert_eq!(sign_in.hittable, Some(true));
    assert_eq!(node(t, "username").role.as_str(), "textField");
    assert_eq!(node(t, "username").value.as_deref(), Some(""));
    assert_eq!(node(t, "password").role.as_str(), "secureTextField");
    assert_eq!(node(t, "remember").role.as_str(), "checkBox");
    assert_eq!(node(t, "remember").value.as_deref(), Some("false"));
    assert_eq!(node(t, "title").role.as_str(), "staticText");
    assert_eq!(node(t, "logo").role.as_str(), "image");
    assert_eq!(node(t, "footer").role.as_str(), "scrollView");
    assert_eq!(node(t, "help").enabled, Some(false));
    assert_eq!(node(t, "help").hittable, Some(false));
    assert_eq!(node(t, "terms").hittable, Some(false));
    assert_eq!(
        node(t, "terms").text.as_deref(),
        Some("Terms & \"Conditions\" <v2>")
    );
    assert_eq!(
        obs.metadata["focusedWindow"],
        json!("com.example.login/.LoginActivity")
    );
    assert_eq!(obs.metadata["screenshotSource"], json!("raw"));
    // One round trip for the tree (focus + dump), one for the screenshot.
    let lines = commands(&fake);
    assert!(lines.contains(&"screencap".to_owned()), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("uiautomator dump")),
        "{lines:?}"
    );

    // Auto screenshots: raw first, then png once, then the faster one.
    let second = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert_eq!(second.metadata["screenshotSource"], json!("png"));
    let third = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert!(third.metadata["screenshotSource"].is_string());
    let img = image::load_from_memory(third.png.as_deref().expect("png")).expect("decodes");
    assert_eq!((img.width(), img.height()), (720, 1280));

    // Unchanged hierarchy: same epoch and ids; typing keeps the structure.
    let again = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    assert_eq!(tree(&again).context, t.context);
    fake.with_device(|d| d.state.username = "ann".into());
    let typed = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    assert_eq!(tree(&typed).context, t.context);
    assert_eq!(node(tree(&typed), "username").value.as_deref(), Some("ann"));
    // Another window: the epoch changes.
    fake.with_device(|d| d.state.screen = Screen::Home);
    let home = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    assert_ne!(tree(&home).context.document_epoch, t.context.document_epoch);
    // A reconnect changes it too.
    fake.with_device(|d| d.state.screen = Screen::Login);
    plugin.disconnect(&ctx(), &device).expect("disconnects");
    plugin.connect(&ctx(), &device).expect("connects");
    let later = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    assert_ne!(
        tree(&later).context.document_epoch,
        t.context.document_epoch
    );
}

#[test]
fn viewport_follows_wm_overrides_and_screenshots_fall_back() {
    let Some(server) = support::server() else {
        return;
    };
    let (_fake, serial) = support::attach(
        &server,
        FakeConfig {
            profile: DeviceProfile {
                width: 1080,
                height: 1920,
                density: 480,
                override_size: Some((540, 960)),
                override_density: Some(240),
                // An unknown header: raw decoding fails, -p takes over.
                raw_header_len: 20,
                visible_to_user_attr: false,
                ..DeviceProfile::default()
            },
            ..FakeConfig::default()
        },
    );
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    let obs = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert_eq!((obs.viewport.width, obs.viewport.height), (540, 960));
    assert!((obs.viewport.scale_factor - 1.5).abs() < 1e-9);
    assert_eq!(obs.metadata["screenshotSource"], json!("png"));
    let img = image::load_from_memory(obs.png.as_deref().expect("png")).expect("decodes");
    assert_eq!((img.width(), img.height()), (540, 960));
    // Without visible-to-user, hittable is unknown.
    assert!(tree(&obs).nodes.iter().all(|n| n.hittable.is_none()));
    let plain = plugin
        .observe(&ctx(), &device, &ObserveRequest::default())
        .expect("observes");
    assert_eq!((plain.viewport.width, plain.viewport.height), (540, 960));
    assert!(plain.png.is_none() && plain.ui_tree.is_none());
}

#[test]
fn gestures_and_keys_send_exact_input_command_lines() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    fake.clear_logs();
    let run = |name: &str, args: Value| plugin.execute(&ctx(), &device, &call(name, args));
    run("tap", json!({ "x": 360, "y": 301 })).expect("tap");
    run("longPress", json!({ "x": 10, "y": 20 })).expect("long press");
    run("longPress", json!({ "x": 10, "y": 20, "durationMs": 2500 })).expect("long press");
    run(
        "swipe",
        json!({ "fromX": 100, "fromY": 900, "toX": 100, "toY": 200 }),
    )
    .expect("swipe");
    run(
        "swipe",
        json!({ "fromX": 1, "fromY": 2, "toX": 3, "toY": 4, "durationMs": 50 }),
    )
    .expect("swipe");
    run("pressKey", json!({ "key": "enter" })).expect("key");
    run("pressKey", json!({ "key": "KEYCODE_VOLUME_UP" })).expect("key");
    run("back", json!({})).expect("back");
    run("home", json!(null)).expect("home");
    assert_eq!(
        commands(&fake),
        vec![
            // The first gesture looks for a touchscreen (none here).
            "getevent -lp; echo __abi; getprop ro.product.cpu.abi",
            "input tap 360 301",
            "input swipe 10 20 10 20 1000",
            "input swipe 10 20 10 20 2500",
            "input swipe 100 900 100 200 300",
            "input swipe 1 2 3 4 50",
            "input keyevent 66",
            "input keyevent 24",
            "input keyevent 4",
            "input keyevent 3",
        ]
    );
    assert!(fake.calls().iter().all(|c| c.kind == "shell,v2"));
    assert_eq!(fake.state().screen, Screen::Launcher);

    let before = fake.calls().len();
    for (name, args) in [
        ("tap", json!({ "x": 720, "y": 5 })),
        ("tap", json!({ "x": -1, "y": 5 })),
        ("tap", json!({ "x": 1.5, "y": 5 })),
        ("tap", json!({ "x": 1 })),
        (
            "swipe",
            json!({ "fromX": 1, "fromY": 1, "toX": 1, "toY": 1, "durationMs": 0 }),
        ),
        ("pressKey", json!({ "key": "teleport" })),
        ("back", json!({ "extra": true })),
        ("launchApp", json!({ "appId": "not a package; reboot" })),
        ("openUrl", json!({ "url": "no scheme" })),
    ] {
        assert_eq!(
            code_of(run(name, args.clone())),
            ErrorCode::InvalidArguments.as_str(),
            "{name} {args}"
        );
    }
    assert_eq!(fake.calls().len(), before, "refused calls reach the device");
}

#[test]
fn input_text_escapes_every_character_input_text_mangles() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    let obs = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    let (x, y) = center(node(tree(&obs), "username"));
    plugin
        .execute(&ctx(), &device, &call("tap", json!({ "x": x, "y": y })))
        .expect("focus");
    fake.clear_logs();
    let text = "a b'c\"d $HOME;|&*?<>()`\\ 100% %sure~#!";
    let out = plugin
        .execute(&ctx(), &device, &call("inputText", json!({ "text": text })))
        .expect("types");
    assert_eq!(out.output["typedChars"], json!(text.chars().count()));
    assert_eq!(fake.state().username, text);
    assert_eq!(
        commands(&fake),
        vec![r#"input text 'a%sb'\''c"d%s$HOME;|&*?<>()`\%s100%%s%' && input text 'sure~#!'"#]
    );
    let args: Vec<Vec<String>> = fake.inputs().into_iter().map(|i| i.args).collect();
    assert_eq!(
        args,
        vec![
            vec![
                "text".to_owned(),
                "a%sb'c\"d%s$HOME;|&*?<>()`\\%s100%%s%".to_owned()
            ],
            vec!["text".to_owned(), "sure~#!".to_owned()],
        ]
    );

    // Newlines and tabs become keys; the tab moves focus to the password.
    fake.clear_logs();
    plugin
        .execute(
            &ctx(),
            &device,
            &call("inputText", json!({ "text": "x\ty\n" })),
        )
        .expect("types");
    assert_eq!(
        commands(&fake),
        vec!["input text 'x' && input keyevent 61 && input text 'y' && input keyevent 66"]
    );
    assert_eq!(fake.state().password, "y");

    // What input text cannot type is refused before anything is sent.
    fake.clear_logs();
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &call("inputText", json!({ "text": "café" })),
        )
        .expect_err("non-ASCII");
    assert_eq!(e.code, ErrorCode::InvalidArguments.as_str());
    assert!(e.message.contains("U+00E9"), "{}", e.message);
    assert!(fake.calls().is_empty());

    // Long texts take several round trips, in order.
    fake.with_device(|d| {
        d.state.username.clear();
        d.state.focus = Some(devicerail_host_android_fake_adb::Field::Username);
    });
    let long = "0123456789 ".repeat(360);
    plugin
        .execute(&ctx(), &device, &call("inputText", json!({ "text": long })))
        .expect("types");
    assert_eq!(fake.state().username, long);
    assert!(fake.calls().len() > 1);
}

#[test]
fn input_secret_reaches_the_device_only_through_stdin() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    let caps = plugin.capabilities(&ctx(), &device).expect("caps");
    assert!(
        caps.actions
            .iter()
            .any(|a| a.name == "inputSecret" && a.is_protected())
    );
    fake.with_device(|d| d.state.focus = Some(devicerail_host_android_fake_adb::Field::Password));
    fake.clear_logs();
    let secret = "s3cr3t pa$$ 'w0rd' 100%s";
    let out = plugin
        .execute(
            &ctx(),
            &device,
            &call("inputSecret", json!({ "text": secret })),
        )
        .expect("types the secret");
    assert_eq!(out.output, json!({ "typedChars": secret.chars().count() }));
    assert_eq!(fake.state().password, secret);
    let calls = fake.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].kind, "exec");
    let encoded = "s3cr3t%spa$$%s'w0rd'%s100%";
    for c in &calls {
        for needle in [secret, encoded, "s3cr3t", "w0rd"] {
            assert!(
                !c.destination.contains(needle),
                "secret on a command line: {c:?}"
            );
        }
    }
    let stdin = String::from_utf8(fake.stdin_received()).expect("utf-8");
    assert_eq!(stdin, format!("t{encoded}\nts\n.\n"));
    assert!(fake.inputs().iter().all(|i| i.source == InputSource::Stdin));

    // Errors never quote the secret.
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &call("inputSecret", json!({ "text": "pässword" })),
        )
        .expect_err("non-ASCII");
    assert_eq!(e.code, ErrorCode::InvalidArguments.as_str());
    assert!(
        !e.message.contains('ä') && !e.message.contains("pässword"),
        "{}",
        e.message
    );
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &call("inputSecret", json!({ "text": 271828 })),
        )
        .expect_err("not a string");
    assert!(!e.message.contains("271828"), "{}", e.message);
}

fn semantic(name: &str, args: Value) -> devicerail_host_plugin_api::protocol::ActionCall {
    call(name, args)
}

fn by_id(id: &str) -> Value {
    json!({ "kind": "selector", "selector": { "identifier": format!("com.example.login:id/{id}") } })
}

#[test]
fn semantic_actions_resolve_the_tree_and_act_by_coordinates() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");

    let c = ctx();
    let found = plugin
        .execute(
            &c,
            &device,
            &semantic(
                "findElement",
                json!({ "selector": { "role": "button", "name": "Sign in" } }),
            ),
        )
        .expect("found");
    assert_eq!(
        found.output["element"]["stableNodeId"],
        json!("0.0.4#sign_in")
    );
    assert_eq!(
        found.output["element"]["observationId"],
        json!(c.observation_id().to_string())
    );
    let resolved = found.resolved.expect("the resolved state");
    assert!(resolved.ui_tree.is_some() && resolved.png.is_none());

    fake.clear_logs();
    let set = plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "setElementValue",
                json!({ "target": by_id("username"), "value": "ann lee" }),
            ),
        )
        .expect("set");
    let Some(ActionExecution::CoordinateFallback {
        fallback_reason, ..
    }) = set.execution
    else {
        panic!("expected coordinate fallback, got {:?}", set.execution);
    };
    assert_eq!(
        fallback_reason,
        CoordinateFallbackReason::SemanticInteractionUnavailable
    );
    assert_eq!(fake.state().username, "ann lee");
    let last = commands(&fake).pop().expect("a command");
    assert_eq!(last, "input tap 360 301 && input text 'ann%slee'");

    // Replacing a value: focus, move to the end, delete, type.
    fake.clear_logs();
    plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "setElementValue",
                json!({ "target": by_id("username"), "value": "bo" }),
            ),
        )
        .expect("set");
    assert_eq!(fake.state().username, "bo");
    assert_eq!(
        commands(&fake).pop().expect("a command"),
        "input tap 360 301 && input keyevent 123 && input keyevent 67 67 67 67 67 67 67 && input text 'bo'"
    );
    plugin
        .execute(
            &ctx(),
            &device,
            &semantic("clearElement", json!({ "target": by_id("username") })),
        )
        .expect("cleared");
    assert_eq!(fake.state().username, "");
    plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "setElementValue",
                json!({ "target": by_id("username"), "value": "ann" }),
            ),
        )
        .expect("set");

    // A disabled element is not actionable; an ambiguous selector is refused.
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &semantic("tapElement", json!({ "target": by_id("help") })),
        )
        .expect_err("disabled");
    assert_eq!(e.code, ErrorCode::ElementNotInteractable.as_str());
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "findElement",
                json!({ "selector": { "role": "staticText" } }),
            ),
        )
        .expect_err("ambiguous");
    assert_eq!(e.code, ErrorCode::ElementAmbiguous.as_str());
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &semantic("findElement", json!({ "selector": { "name": "Nope" } })),
        )
        .expect_err("missing");
    assert_eq!(e.code, ErrorCode::ElementNotFound.as_str());

    // Keep a reference, navigate, and the reference is stale.
    let remember = plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "findElement",
                json!({ "selector": { "identifier": "com.example.login:id/remember" } }),
            ),
        )
        .expect("found");
    let element = remember.output["element"].clone();
    plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "tapElement",
                json!({ "target": { "kind": "node", "node": element.clone() } }),
            ),
        )
        .expect("tap by reference");
    assert!(fake.state().remember);
    plugin
        .execute(&ctx(), &device, &semantic("tapElement", json!({ "target": { "kind": "selector", "selector": { "text": { "value": "sign in" } } } })))
        .expect("tap sign in");
    assert_eq!(fake.state().screen, Screen::Home);
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "tapElement",
                json!({ "target": { "kind": "node", "node": element } }),
            ),
        )
        .expect_err("stale");
    assert_eq!(e.code, ErrorCode::ElementStale.as_str());

    let waited = plugin
        .execute(
            &ctx(),
            &device,
            &semantic("waitForElement", json!({ "selector": { "text": { "value": "Hello, ann" } }, "condition": "visible" })),
        )
        .expect("waits");
    assert_eq!(waited.output["matched"], json!(true));
    let short = CallContext::new(Some(
        Instant::now() + support::paced(Duration::from_millis(400)),
    ));
    let gone = plugin
        .execute(
            &short,
            &device,
            &semantic(
                "waitForElement",
                json!({ "selector": { "name": "Sign in" }, "condition": "absent" }),
            ),
        )
        .expect("waits");
    assert_eq!(gone.output["matched"], json!(true));
    let never = plugin.execute(
        &short,
        &device,
        &semantic(
            "waitForElement",
            json!({ "selector": { "name": "Never there" } }),
        ),
    );
    assert!(
        never
            .as_ref()
            .is_ok_and(|o| o.output["matched"] == json!(false))
            || never.as_ref().is_err_and(|e| e.is_deadline()),
        "{never:?}"
    );
}

#[test]
fn apps_and_urls() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    fake.with_device(|d| d.state.screen = Screen::Launcher);
    fake.clear_logs();
    plugin
        .execute(
            &ctx(),
            &device,
            &call("launchApp", json!({ "appId": "com.example.login" })),
        )
        .expect("launches");
    assert_eq!(fake.state().screen, Screen::Login);
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &call("launchApp", json!({ "appId": "com.example.missing" })),
        )
        .expect_err("not installed");
    assert_eq!(e.code, ErrorCode::PlatformError.as_str());
    let url = "https://example.com/search?q=a b&x='1'";
    let e = plugin
        .execute(&ctx(), &device, &call("openUrl", json!({ "url": url })))
        .expect_err("whitespace");
    assert_eq!(e.code, ErrorCode::InvalidArguments.as_str());
    let url = "https://example.com/search?q=a+b&x='1'&y=$HOME;";
    plugin
        .execute(&ctx(), &device, &call("openUrl", json!({ "url": url })))
        .expect("opens");
    assert_eq!(fake.state().screen, Screen::Browser { url: url.into() });
    assert_eq!(
        commands(&fake),
        vec![
            "monkey -p com.example.login -c android.intent.category.LAUNCHER 1".to_owned(),
            "monkey -p com.example.missing -c android.intent.category.LAUNCHER 1".to_owned(),
            format!(
                "am start -a android.intent.action.VIEW -d 'https://example.com/search?q=a+b&x='\\''1'\\''&y=$HOME;'"
            ),
        ]
    );
    let obs = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    assert_eq!(tree(&obs).context.context_id.as_str(), "com.android.chrome");
}

#[test]
fn a_device_that_vanishes_mid_action_fails_typed_and_the_driver_keeps_serving() {
    let Some(server) = support::server() else {
        return;
    };
    let (doomed, doomed_serial) = support::online(&server);
    let (_steady, steady_serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let (a, b) = (
        DeviceId::new(doomed_serial.clone()),
        DeviceId::new(steady_serial.clone()),
    );
    plugin.connect(&ctx(), &a).expect("connects");
    plugin.connect(&ctx(), &b).expect("connects");
    doomed.vanish_on("input tap 7 7");
    let started = Instant::now();
    let e = plugin
        .execute(&ctx(), &a, &call("tap", json!({ "x": 7, "y": 7 })))
        .expect_err("the device vanished");
    assert_eq!(e.code, ErrorCode::DeviceUnavailable.as_str(), "{e:?}");
    assert!(e.retryable);
    assert!(started.elapsed() < Duration::from_secs(10));
    // Later calls on it fail typed, quickly.
    let e = plugin.observe(&ctx(), &a, &BOTH).expect_err("still gone");
    assert_eq!(e.code, ErrorCode::DeviceUnavailable.as_str(), "{e:?}");
    // Everything else keeps working.
    let list = plugin.list_devices(&ctx()).expect("listing");
    assert!(list.iter().any(|d| d.id == b && d.connected));
    let obs = plugin.observe(&ctx(), &b, &BOTH).expect("the other device");
    assert!(obs.png.is_some());
    plugin
        .execute(&ctx(), &b, &call("tap", json!({ "x": 7, "y": 7 })))
        .expect("the other device acts");
    // When it comes back, the lease still holds and it serves again.
    doomed.reappear();
    let _ = server.connect(doomed.port());
    server
        .wait_for_state(&doomed_serial, "device", Duration::from_secs(15))
        .expect("back online");
    plugin
        .execute(&ctx(), &a, &call("tap", json!({ "x": 8, "y": 8 })))
        .expect("serves again");
}

#[test]
fn deadlines_cancellation_and_leases() {
    let Some(server) = support::server() else {
        return;
    };
    let (_fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    let tap = call("tap", json!({ "x": 1, "y": 1 }));
    assert_eq!(
        code_of(plugin.execute(&ctx(), &device, &tap)),
        ErrorCode::DeviceNotConnected.as_str()
    );
    assert_eq!(
        code_of(plugin.observe(&ctx(), &device, &BOTH)),
        ErrorCode::DeviceNotConnected.as_str()
    );
    assert_eq!(
        code_of(plugin.connect(&ctx(), &DeviceId::new("127.0.0.1:1"))),
        ErrorCode::DeviceNotFound.as_str()
    );
    plugin.connect(&ctx(), &device).expect("connects");
    let expired = CallContext::new(Some(Instant::now()));
    assert_eq!(
        code_of(plugin.execute(&expired, &device, &tap)),
        ErrorCode::RequestTimedOut.as_str()
    );
    let cancelled = ctx();
    cancelled.cancel();
    assert_eq!(
        code_of(plugin.observe(&cancelled, &device, &BOTH)),
        ErrorCode::RequestCancelled.as_str()
    );
    // Cancelling a wait in flight ends it promptly.
    let waiting = ctx();
    let w2 = waiting.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        w2.cancel();
    });
    let started = Instant::now();
    let r = plugin.execute(
        &waiting,
        &device,
        &call(
            "waitForElement",
            json!({ "selector": { "name": "Never there" } }),
        ),
    );
    canceller.join().expect("joins");
    assert_eq!(code_of(r), ErrorCode::RequestCancelled.as_str());
    assert!(started.elapsed() < Duration::from_secs(5));
    plugin.disconnect(&ctx(), &device).expect("disconnects");
    plugin.disconnect(&ctx(), &device).expect("idempotent");
}

#[test]
fn an_unreachable_server_gives_typed_errors() {
    let Some(server) = support::server() else {
        return;
    };
    let plugin = support::plugin(&server);
    drop(server);
    let e = plugin.list_devices(&ctx()).expect_err("no server");
    assert_eq!(e.code, "adb_server_unavailable");
    assert!(e.retryable);
    let doctor = plugin.doctor();
    assert!(
        doctor
            .iter()
            .any(|c| c.name == "adb server"
                && c.status == devicerail_host_plugin_api::CheckStatus::Fail),
        "{doctor:?}"
    );
}

#[test]
fn a_legacy_device_without_shell_v2_uses_shell_and_exec() {
    let Some(server) = support::server() else {
        return;
    };
    // Android 6: protocol 0x01000000 (checksums on), 4 KiB payloads, no
    // shell_v2.
    let (fake, serial) = support::attach(
        &server,
        FakeConfig {
            version: devicerail_host_android_fake_adb::packet::A_VERSION_MIN,
            max_payload: 4096,
            features: Vec::new(),
            profile: DeviceProfile {
                release: "6.0.1".into(),
                sdk: 23,
                raw_header_len: 12,
                visible_to_user_attr: false,
                ..DeviceProfile::default()
            },
            ..FakeConfig::default()
        },
    );
    let plugin = support::plugin(&server);
    devicerail_host_plugin_api::conformance::Suite::loaded(&plugin)
        .device(&serial)
        .run()
        .assert_passed();
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    fake.clear_logs();
    let obs = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert_eq!((obs.viewport.width, obs.viewport.height), (720, 1280));
    let calls = fake.calls();
    let shot = calls
        .iter()
        .find(|c| c.command.starts_with("screencap"))
        .expect("a screenshot");
    assert_eq!(shot.kind, "exec", "binary output avoids the terminal");
    let dump = calls
        .iter()
        .find(|c| c.command.contains("uiautomator"))
        .expect("a dump");
    assert_eq!(dump.kind, "shell");
    plugin
        .execute(
            &ctx(),
            &device,
            &call("inputText", json!({ "text": "legacy ok" })),
        )
        .expect("types");
}

/// How many command lines the fake ran that `pred` accepts.
fn count(
    fake: &devicerail_host_android_fake_adb::FakeAdbDevice,
    pred: impl Fn(&str) -> bool,
) -> usize {
    commands(fake).iter().filter(|c| pred(c)).count()
}

fn is_raw_screencap(line: &str) -> bool {
    line.split([';', '&'])
        .any(|part| part.trim() == "screencap")
}

fn is_dump(line: &str) -> bool {
    line.contains("uiautomator dump")
}

#[test]
fn an_animating_screen_is_a_typed_retryable_error_never_a_stale_tree() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    // A first dump leaves its file on the device.
    let login = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    node(tree(&login), "sign_in");

    // The app moves on and animates: uiautomator gives up (status 0, no
    // file). The old file must not come back as the current screen.
    fake.with_device(|d| {
        d.state.screen = Screen::Home;
        d.state.signed_in_as = "ann".into();
        d.state.dump_not_idle = u32::MAX;
    });
    fake.clear_logs();
    let e = plugin
        .observe(&ctx(), &device, &TREE)
        .expect_err("never idle");
    assert_eq!(e.code, ErrorCode::PlatformError.as_str(), "{e:?}");
    assert_eq!(e.details["platformCode"], json!("ui_not_idle"));
    assert!(e.retryable, "the next attempt may find the screen idle");
    assert!(
        e.message.contains("could not get idle state"),
        "{}",
        e.message
    );
    // A bounded retry inside the call: three attempts, no more.
    assert_eq!(e.details["attempts"], json!(3));
    assert_eq!(count(&fake, is_dump), 3);
    // The platform code survives the host's filter.
    assert_eq!(
        ErrorCode::PlatformError.filtered_details(e.details.clone()),
        json!({ "platformCode": "ui_not_idle" })
    );

    // Semantic Actions see the same typed error.
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "findElement",
                json!({ "selector": { "text": { "value": "Hello, ann" } } }),
            ),
        )
        .expect_err("never idle");
    assert_eq!(e.details["platformCode"], json!("ui_not_idle"));

    // It settles after one more failure: the internal retry hides it.
    fake.with_device(|d| d.state.dump_not_idle = 1);
    fake.clear_logs();
    let home = plugin.observe(&ctx(), &device, &TREE).expect("settles");
    node(tree(&home), "greeting");
    assert_eq!(count(&fake, is_dump), 2);
}

#[test]
fn a_broken_screenshot_method_is_remembered_until_reconnect_even_when_the_dump_fails() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::attach(
        &server,
        FakeConfig {
            profile: DeviceProfile {
                // An unknown raw header: raw output is unusable here.
                raw_header_len: 20,
                ..DeviceProfile::default()
            },
            ..FakeConfig::default()
        },
    );
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    // The first capture falls back to png while the dump fails.
    fake.with_device(|d| d.state.dump_not_idle = u32::MAX);
    let e = plugin
        .observe(&ctx(), &device, &BOTH)
        .expect_err("the dump fails");
    assert_eq!(e.details["platformCode"], json!("ui_not_idle"));
    // One raw capture failed; the dump's retries waited for a still screen
    // reading frames too (before the capture was known broken).
    let after_first = count(&fake, is_raw_screencap);
    assert!(after_first >= 1);
    fake.with_device(|d| d.state.dump_not_idle = 0);
    for _ in 0..3 {
        let obs = plugin.observe(&ctx(), &device, &BOTH).expect("observes");
        assert_eq!(obs.metadata["screenshotSource"], json!("png"));
        let shot = plugin
            .observe(
                &ctx(),
                &device,
                &ObserveRequest {
                    screenshot: true,
                    ui_tree: false,
                    live: None,
                },
            )
            .expect("observes");
        assert_eq!(shot.metadata["screenshotSource"], json!("png"));
    }
    assert_eq!(
        count(&fake, is_raw_screencap),
        after_first,
        "raw is not tried again before every capture"
    );
    // A reconnect forgets it: raw gets one more chance.
    plugin.disconnect(&ctx(), &device).expect("disconnects");
    plugin.connect(&ctx(), &device).expect("connects");
    plugin.observe(&ctx(), &device, &BOTH).expect("observes");
    assert_eq!(count(&fake, is_raw_screencap), after_first + 1);
}

#[test]
fn tapping_a_label_taps_its_clickable_row() {
    let Some(server) = support::server() else {
        return;
    };
    let (fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    let device = DeviceId::new(serial);
    plugin.connect(&ctx(), &device).expect("connects");
    fake.with_device(|d| {
        d.state.screen = Screen::Home;
        d.state.signed_in_as = "ann".into();
    });
    let obs = plugin.observe(&ctx(), &device, &TREE).expect("observes");
    let (label, row) = (
        node(tree(&obs), "notifications_label"),
        node(tree(&obs), "notifications_row"),
    );
    assert_eq!(label.hittable, Some(false), "a label is not clickable");
    assert_eq!(row.hittable, Some(true));
    let (label_id, row_id) = (label.stable_node_id.clone(), row.stable_node_id.clone());
    let (lx, ly) = center(label);

    fake.clear_logs();
    let tapped = plugin
        .execute(
            &ctx(),
            &device,
            &semantic("tapElement", json!({ "target": { "kind": "selector", "selector": { "text": { "value": "Notifications" } } } })),
        )
        .expect("the row takes the tap");
    assert!(fake.state().notifications, "the row was activated");
    // The result names the label; the resolved observation names the row.
    assert_eq!(
        tapped.output["element"]["stableNodeId"],
        json!(label_id.as_str())
    );
    let resolved = tapped.resolved.expect("the resolved state");
    assert_eq!(
        resolved.metadata["tapTarget"],
        json!({
            "stableNodeId": row_id.as_str(),
            "role": "linearLayout",
            "targetStableNodeId": label_id.as_str(),
            "reason": "nearestHittableAncestor",
        })
    );
    assert!(matches!(
        tapped.execution,
        Some(ActionExecution::CoordinateFallback { .. })
    ));
    // The finger lands on the label, which lies inside the row.
    assert_eq!(
        commands(&fake).last().map(String::as_str),
        Some(format!("input tap {lx} {ly}").as_str())
    );

    // A hittable node keeps its own tap, with no redirection reported.
    let direct = plugin
        .execute(
            &ctx(),
            &device,
            &semantic(
                "tapElement",
                json!({ "target": by_id("notifications_row") }),
            ),
        )
        .expect("taps the row");
    assert!(!fake.state().notifications);
    assert!(
        direct
            .resolved
            .expect("resolved")
            .metadata
            .get("tapTarget")
            .is_none()
    );

    // A label with no clickable ancestor is still refused.
    let e = plugin
        .execute(
            &ctx(),
            &device,
            &semantic("tapElement", json!({ "target": by_id("greeting") })),
        )
        .expect_err("nothing to activate");
    assert_eq!(e.code, ErrorCode::ElementNotInteractable.as_str());
    assert_eq!(e.details["reason"], json!("not hittable"));
}
