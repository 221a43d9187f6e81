//! `uiautomator dump` XML to the normalized UI tree.
//!
//! * Nodes in document (pre)order; roots are the `<hierarchy>`'s children.
//! * Stable node ids are the child-index path from the hierarchy
//!   (`0.2.1`), suffixed with the resource-id's entry name when there is
//!   one (`0.2.1#username`): identical for an unchanged hierarchy.
//! * Roles come from the class (see `role_for`); names from
//!   `content-desc`, then `text`; `value` is the text of editable fields
//!   and `true`/`false` for checkable ones; `identifier` is the
//!   resource-id; `enabled` is read as given; `hittable` is `clickable &&
//!   enabled && visible-to-user` where the dump has `visible-to-user` (API
//!   levels that lack it leave it `null`).
//! * The structure signature (depth, class, resource-id, package of every
//!   node; no texts, no bounds, no states) feeds the document epoch.

use devicerail_host_plugin_api::protocol::{
    BoundedString, IdString, MAX_UI_NODES, MAX_UI_SNAPSHOT_BYTES, NodeText, RoleString, UiNode,
    UiRect,
};

/// Room left in the size bound for the snapshot's own fields.
const ENVELOPE_BYTES: usize = 4096;

/// A dump that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UiParseError {
    /// The text is not well-formed XML; the XML parser's message.
    #[error("the UI dump is not XML: {0}")]
    Xml(String),
    /// Well-formed, but not a `uiautomator dump` document.
    #[error("the UI dump has no <hierarchy> element")]
    NoHierarchy,
    /// A `<hierarchy>` without a single node.
    #[error("the UI dump has no nodes (the window may be secure or still animating)")]
    Empty,
}

/// A parsed dump.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Preorder.
    pub nodes: Vec<UiNode>,
    /// Ids of the nodes that are direct children of `<hierarchy>`.
    pub roots: Vec<String>,
    /// Package of the first root.
    pub packages: Vec<String>,
    /// `hierarchy rotation` (quarter turns).
    pub rotation: u32,
    /// FNV-1a over the structure signature.
    pub structure: u64,
    /// Whether nodes were dropped to fit the snapshot bounds.
    pub truncated: bool,
}

/// FNV-1a, 64 bit: a hash that is the same in every build and process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// Writes a field and a separator no field contains.
    pub(crate) fn field(&mut self, s: &str) {
        self.write(s.as_bytes());
        self.write(&[0xff]);
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// The last segment of a class name (`android.widget.Button` → `Button`,
/// `a.b.Outer$Inner` → `Inner`).
pub(crate) fn short_class(class: &str) -> &str {
    class.rsplit(['.', '$']).next().unwrap_or(class)
}

fn lower_camel(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out: String = first.to_lowercase().collect();
            out.extend(chars.filter(|c| c.is_alphanumeric()));
            out
        }
        None => String::new(),
    }
}

/// Whether nodes of `class` hold editable text.
pub(crate) fn is_editable(class: &str) -> bool {
    let short = short_class(class);
    short.ends_with("EditText") || short.ends_with("AutoCompleteTextView")
}

/// The normalized role of a view class.
pub(crate) fn role_for(class: &str, password: bool) -> String {
    let short = short_class(class);
    if is_editable(class) {
        return if password {
            "secureTextField".into()
        } else {
            "textField".into()
        };
    }
    let role = match short {
        "Button"
        | "ImageButton"
        | "MaterialButton"
        | "AppCompatButton"
        | "AppCompatImageButton"
        | "FloatingActionButton"
        | "ExtendedFloatingActionButton" => "button",
        "TextView" | "AppCompatTextView" | "MaterialTextView" => "staticText",
        "ImageView" | "AppCompatImageView" | "ShapeableImageView" => "image",
        "CheckBox" | "AppCompatCheckBox" | "MaterialCheckBox" => "checkBox",
        "Switch" | "SwitchCompat" | "SwitchMaterial" | "MaterialSwitch" => "switch",
        "RadioButton" | "AppCompatRadioButton" | "MaterialRadioButton" => "radioButton",
        "ToggleButton" => "toggleButton",
        "SeekBar" | "AppCompatSeekBar" | "Slider" => "slider",
        "ProgressBar" => "progressIndicator",
        "Spinner" | "AppCompatSpinner" => "comboBox",
        "ListView" | "RecyclerView" | "ExpandableListView" => "list",
        "GridView" => "grid",
        "ScrollView" | "HorizontalScrollView" | "NestedScrollView" => "scrollView",
        "WebView" => "webView",
        "TabWidget" | "TabLayout" => "tabList",
        "Toolbar" | "ActionBar" => "toolbar",
        _ => "",
    };
    if !role.is_empty() {
        return role.into();
    }
    let camel = lower_camel(short);
    if camel.is_empty() {
        "unknown".into()
    } else {
        camel
    }
}

/// Parses `[x1,y1][x2,y2]`.
pub(crate) fn parse_bounds(s: &str) -> Option<UiRect> {
    let nums: Vec<f64> = s
        .split(['[', ']', ','])
        .filter(|p| !p.is_empty())
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .ok()?;
    let [x1, y1, x2, y2] = nums[..] else {
        return None;
    };
    Some(UiRect::new(x1, y1, (x2 - x1).max(0.0), (y2 - y1).max(0.0)))
}

fn attr_bool(node: &roxmltree::Node<'_, '_>, name: &str) -> Option<bool> {
    match node.attribute(name)? {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

fn non_empty<'a>(node: &roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attribute(name).filter(|s| !s.is_empty())
}

fn text_of(s: &str) -> Option<NodeText> {
    BoundedString::truncating(s)
}

struct Builder {
    nodes: Vec<UiNode>,
    roots: Vec<String>,
    packages: Vec<String>,
    hash: Fnv,
    bytes: usize,
    truncated: bool,
}

impl Builder {
    fn visit(
        &mut self,
        el: roxmltree::Node<'_, '_>,
        path: &str,
        parent: Option<&IdString>,
        depth: usize,
    ) {
        if self.truncated {
            return;
        }
        let class = el.attribute("class").unwrap_or("");
        let resource_id = el.attribute("resource-id").unwrap_or("");
        let package = el.attribute("package").unwrap_or("");
        self.hash.field(&depth.to_string());
        self.hash.field(class);
        self.hash.field(resource_id);
        self.hash.field(package);
        let entry = resource_id
            .rsplit_once(":id/")
            .map_or(resource_id, |(_, e)| e);
        let id = if entry.is_empty() {
            path.to_owned()
        } else {
            format!("{path}#{entry}")
        };
        let Some(id) = IdString::truncating(&id) else {
            return;
        };
        let password = attr_bool(&el, "password") == Some(true);
        let text = el.attribute("text").unwrap_or("");
        let enabled = attr_bool(&el, "enabled");
        let clickable = attr_bool(&el, "clickable");
        let hittable = match (clickable, enabled, attr_bool(&el, "visible-to-user")) {
            (Some(c), Some(e), Some(v)) => Some(c && e && v),
            _ => None,
        };
        let value = if is_editable(class) {
            text_of(text)
        } else if attr_bool(&el, "checkable") == Some(true) {
            attr_bool(&el, "checked").and_then(|c| text_of(if c { "true" } else { "false" }))
        } else {
            None
        };
        let Some(role) = RoleString::truncating(&role_for(class, password))
            .or_else(|| RoleString::truncating("unknown"))
        else {
            return;
        };
        let node = UiNode {
            stable_node_id: id.clone(),
            parent_stable_node_id: parent.cloned(),
            role,
            name: non_empty(&el, "content-desc")
                .or(non_empty(&el, "text"))
                .and_then(text_of),
            value,
            identifier: non_empty(&el, "resource-id").and_then(BoundedString::truncating),
            text: non_empty(&el, "text").and_then(text_of),
            bounds: el.attribute("bounds").and_then(parse_bounds),
            enabled,
            hittable,
        };
        let size = serde_json::to_vec(&node).map(|v| v.len() + 1).unwrap_or(0)
            + if parent.is_none() { id.len() + 3 } else { 0 };
        if self.nodes.len() >= MAX_UI_NODES
            || self.bytes + size + ENVELOPE_BYTES > MAX_UI_SNAPSHOT_BYTES
        {
            self.truncated = true;
            return;
        }
        self.bytes += size;
        if parent.is_none() {
            self.roots.push(id.as_str().to_owned());
            self.packages.push(package.to_owned());
        }
        self.nodes.push(node);
        for (i, child) in el.children().filter(|c| c.has_tag_name("node")).enumerate() {
            self.visit(child, &format!("{path}.{i}"), Some(&id), depth + 1);
        }
    }
}

/// Parses a dump.
pub fn parse(xml: &str) -> Result<Parsed, UiParseError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| UiParseError::Xml(e.to_string()))?;
    let hierarchy = doc
        .descendants()
        .find(|n| n.has_tag_name("hierarchy"))
        .ok_or(UiParseError::NoHierarchy)?;
    let rotation = hierarchy
        .attribute("rotation")
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    let mut b = Builder {
        nodes: Vec::new(),
        roots: Vec::new(),
        packages: Vec::new(),
        hash: Fnv::default(),
        bytes: 0,
        truncated: false,
    };
    for (i, root) in hierarchy
        .children()
        .filter(|c| c.has_tag_name("node"))
        .enumerate()
    {
        b.visit(root, &i.to_string(), None, 0);
    }
    if b.nodes.is_empty() {
        return Err(UiParseError::Empty);
    }
    Ok(Parsed {
        nodes: b.nodes,
        roots: b.roots,
        packages: b.packages,
        rotation,
        structure: b.hash.finish(),
        truncated: b.truncated,
    })
}

/// The package a tree belongs to: the focused window's package if a root
/// shows it, else the first root's.
pub(crate) fn context_package<'a>(parsed: &'a Parsed, focused_package: Option<&'a str>) -> &'a str {
    focused_package
        .filter(|f| parsed.packages.iter().any(|p| p == f))
        .or_else(|| {
            parsed
                .packages
                .iter()
                .find(|p| !p.is_empty())
                .map(String::as_str)
        })
        .unwrap_or("unknown")
}

/// The document epoch: changes with the connection, the focused window
/// and the structure.
pub(crate) fn document_epoch(
    connection: u64,
    focused_window: Option<&str>,
    structure: u64,
) -> String {
    let mut h = Fnv::default();
    h.field(focused_window.unwrap_or(""));
    h.write(&structure.to_le_bytes());
    format!("{connection:x}-{:016x}", h.finish())
}

/// The focused window from `dumpsys window` lines such as
/// `mCurrentFocus=Window{5e1f00 u0 com.example/.MainActivity}`:
/// `(component, package)`.
pub(crate) fn parse_focus(text: &str) -> Option<(String, String)> {
    let line = text.lines().find(|l| l.contains("mCurrentFocus="))?;
    let inner = line
        .split_once("Window{")?
        .1
        .trim_end()
        .trim_end_matches('}');
    let component = inner.split_whitespace().last()?.to_owned();
    if component == "null" {
        return None;
    }
    let package = component.split('/').next().unwrap_or(&component).to_owned();
    Some((component, package))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,0][720,1280]"><node index="0" text="Sign in" resource-id="com.example:id/sign_in" class="android.widget.Button" package="com.example" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[72,640][648,730]" /><node index="1" text="•••" resource-id="com.example:id/password" class="android.widget.EditText" package="com.example" content-desc="Password" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true" scrollable="false" long-clickable="true" password="true" selected="false" visible-to-user="true" bounds="[72,384][648,474]" /><node index="2" text="Remember &amp; &quot;me&quot;" resource-id="com.example:id/remember" class="android.widget.CheckBox" package="com.example" content-desc="" checkable="true" checked="true" clickable="true" enabled="false" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[72,512][432,576]" /><node index="3" text="" resource-id="" class="com.example.views.Fancy$InnerView" package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][0,0]" /></node></hierarchy>"#;

    #[test]
    fn nodes_roles_names_values() {
        let p = parse(DUMP).expect("parses");
        assert_eq!(p.roots, vec!["0"]);
        assert_eq!(p.packages, vec!["com.example"]);
        let ids: Vec<&str> = p.nodes.iter().map(|n| n.stable_node_id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["0", "0.0#sign_in", "0.1#password", "0.2#remember", "0.3"]
        );
        let roles: Vec<&str> = p.nodes.iter().map(|n| n.role.as_str()).collect();
        assert_eq!(
            roles,
            vec![
                "frameLayout",
                "button",
                "secureTextField",
                "checkBox",
                "innerView"
            ]
        );
        let b = &p.nodes[1];
        assert_eq!(b.name.as_deref(), Some("Sign in"));
        assert_eq!(b.identifier.as_deref(), Some("com.example:id/sign_in"));
        assert_eq!(b.hittable, Some(true));
        assert_eq!(b.value, None);
        let bounds = b.bounds.expect("bounds");
        assert_eq!(
            (bounds.x, bounds.y, bounds.width.get(), bounds.height.get()),
            (72.0, 640.0, 576.0, 90.0)
        );
        let pw = &p.nodes[2];
        assert_eq!(pw.name.as_deref(), Some("Password"));
        assert_eq!(pw.value.as_deref(), Some("•••"));
        let cb = &p.nodes[3];
        assert_eq!(cb.text.as_deref(), Some("Remember & \"me\""));
        assert_eq!(cb.value.as_deref(), Some("true"));
        assert_eq!(cb.enabled, Some(false));
        assert_eq!(cb.hittable, Some(false));
        // No visible-to-user attribute: hittable unknown.
        assert_eq!(p.nodes[4].hittable, None);
        assert_eq!(p.nodes[0].hittable, Some(false));
    }

    #[test]
    fn structure_ignores_texts_but_not_shape() {
        let a = parse(DUMP).expect("parses");
        let texts = parse(&DUMP.replace("Sign in", "Log in")).expect("parses");
        assert_eq!(a.structure, texts.structure);
        assert_eq!(a.nodes[1].stable_node_id, texts.nodes[1].stable_node_id);
        let shape = parse(&DUMP.replace("android.widget.Button", "android.widget.TextView"))
            .expect("parses");
        assert_ne!(a.structure, shape.structure);
        assert_ne!(
            document_epoch(1, None, a.structure),
            document_epoch(1, None, shape.structure)
        );
        assert_ne!(
            document_epoch(1, Some("a/.A"), a.structure),
            document_epoch(1, Some("a/.B"), a.structure)
        );
        assert_ne!(
            document_epoch(1, None, a.structure),
            document_epoch(2, None, a.structure)
        );
    }

    #[test]
    fn bad_dumps() {
        assert!(matches!(
            parse("ERROR: could not get idle state."),
            Err(UiParseError::Xml(_))
        ));
        assert_eq!(parse("<x/>"), Err(UiParseError::NoHierarchy));
        assert_eq!(
            parse("<hierarchy rotation=\"0\"/>"),
            Err(UiParseError::Empty)
        );
        assert_eq!(parse_bounds("[1,2][3,4]").map(|r| r.width.get()), Some(2.0));
        assert_eq!(parse_bounds("[1,2][3]"), None);
        assert_eq!(parse_bounds("[-5,0][10,10]").map(|r| r.x), Some(-5.0));
    }

    #[test]
    fn focus_lines() {
        let text = "  mCurrentFocus=Window{5e1f00 u0 com.example.login/.LoginActivity}\n";
        assert_eq!(
            parse_focus(text),
            Some((
                "com.example.login/.LoginActivity".into(),
                "com.example.login".into()
            ))
        );
        assert_eq!(parse_focus("  mCurrentFocus=null\n"), None);
        assert_eq!(parse_focus(""), None);
    }

    #[test]
    fn huge_dumps_are_truncated_in_preorder() {
        let leaf = r#"<node text="x" resource-id="" class="android.widget.TextView" package="p" content-desc="" clickable="false" enabled="true" bounds="[0,0][1,1]" />"#;
        let xml = format!(
            r#"<hierarchy rotation="1"><node class="android.widget.FrameLayout" package="p" bounds="[0,0][10,10]">{}</node></hierarchy>"#,
            leaf.repeat(MAX_UI_NODES + 10)
        );
        let p = parse(&xml).expect("parses");
        assert!(p.truncated);
        assert!(p.nodes.len() <= MAX_UI_NODES);
        assert_eq!(p.rotation, 1);
    }
}
