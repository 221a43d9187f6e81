//! Reading every frame of the page for one observation, and mapping
//! points of a frame to the page.
//!
//! * The page's session gives the main frame's accessibility tree and one
//!   DOM snapshot holding every document its renderer process draws: the
//!   main document and its same-process `<iframe>` documents (linked by
//!   `contentDocumentIndex`). Each of those frames' accessibility trees is
//!   asked for by frame id on the same session.
//! * Out-of-process (cross-site) frames are `iframe` targets whose
//!   `parentFrameId` is a frame already read: the driver attaches to each
//!   (flat session, kept while the target lives) and reads it the same
//!   way, its own same-process children included. `Target.getTargets` is
//!   only asked when a frame read has an `<iframe>` whose document was not
//!   in its process's snapshot.
//! * Each frame's viewport in the page comes from its `<iframe>` element's
//!   content box, asked in the parent's document ([`scripts::frame_point`])
//!   and added up the chain of parents.
//! * Bounded: at most [`MAX_FRAMES`] frames, [`MAX_FRAME_DEPTH`] deep. A
//!   frame that goes away while it is read is left out (logged), never a
//!   failed observation.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::cdp::accessibility::AxNode;
use crate::cdp::dom::DomSnapshot;
use crate::cdp::{CdpError, CdpSession, On};
use crate::frames::{FrameEntry, FrameRegistry, MAX_FRAME_DEPTH, MAX_FRAMES, NodeKey};
use crate::scripts;
use crate::ui_tree::facts::{self, CssRect, DocFacts};

/// One frame read for an observation.
#[derive(Debug)]
pub(crate) struct FrameRead {
    pub(crate) entry: FrameEntry,
    pub(crate) ax: Vec<AxNode>,
    pub(crate) facts: DocFacts,
    /// Its viewport in CSS pixels of the page's viewport.
    pub(crate) rect: CssRect,
    /// Nesting depth (the main frame is 0).
    pub(crate) depth: usize,
}

/// [`scripts::frame_point`]'s answer.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct FramePoint {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) left: f64,
    pub(crate) top: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
    #[serde(default)]
    pub(crate) hit: bool,
    #[serde(default)]
    pub(crate) covering: Option<String>,
}

/// A frame failure that leaves the frame out instead of failing the
/// observation: the frame or its target went away while it was read.
fn soft<T>(what: &str, r: Result<T, CdpError>) -> Result<Option<T>, CdpError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e @ (CdpError::Protocol { .. } | CdpError::Decode { .. })) => {
            tracing::debug!("frame left out ({what}): {e}");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The session a frame entry's process is reached through.
pub(crate) fn session_for(page: &CdpSession, entry: &FrameEntry) -> CdpSession {
    match &entry.session {
        None => page.clone(),
        Some(id) => {
            CdpSession::attached(page.client().clone(), id.clone()).with_timeout(page.timeout())
        }
    }
}

/// The script object of a node of `session`'s process: by backend id,
/// or by library id in the frame's world `world` (`None`: the node, or
/// its document, is gone).
pub(crate) async fn node_object(
    session: &CdpSession,
    world: Option<i64>,
    node: NodeKey,
) -> Result<Option<String>, CdpError> {
    match node {
        NodeKey::Backend(b) => session.resolve_backend_node(b).await,
        NodeKey::World(id) => {
            let Some(context) = world else {
                return Ok(None);
            };
            match crate::world::node_object(session, context, id).await {
                Err(e) if crate::world::context_gone(&e) => Ok(None),
                r => r,
            }
        }
    }
}

/// Calls `function` on a node of `session`'s process (see
/// [`node_object`]; `None`: the node is gone).
pub(crate) async fn call_on_node<R: serde::de::DeserializeOwned>(
    session: &CdpSession,
    world: Option<i64>,
    node: NodeKey,
    function: &str,
    args: &[Value],
) -> Result<Option<R>, CdpError> {
    let Some(object) = node_object(session, world, node).await? else {
        return Ok(None);
    };
    let r = session
        .call_function_on(On::Object(&object), function, args)
        .await;
    let _ = session.release_object(&object).await;
    r.map(Some)
}

/// A same-process document of one snapshot waiting to be read.
struct Pending {
    doc: usize,
    parent_key: u32,
    owner: i64,
    depth: usize,
}

/// Reads the frames of one renderer process: `root` (already keyed) and
/// its same-process descendants in `dom`, breadth first.
#[allow(clippy::too_many_arguments)]
async fn read_process(
    session: &CdpSession,
    session_id: Option<&str>,
    root: FrameEntry,
    root_ax: Vec<AxNode>,
    dom: &DomSnapshot,
    depth: usize,
    registry: &mut FrameRegistry,
    out: &mut Vec<FrameRead>,
) -> Result<(), CdpError> {
    let Some(root_facts) = facts::document(dom, 0) else {
        return Ok(());
    };
    let root_key = root.key;
    out.push(FrameRead {
        entry: root,
        ax: root_ax,
        facts: root_facts,
        rect: (0.0, 0.0, 0.0, 0.0),
        depth,
    });
    let owners = facts::owners(dom);
    let mut key_of_doc: HashMap<usize, u32> = HashMap::from([(0, root_key)]);
    let mut queue: VecDeque<Pending> = VecDeque::new();
    let push_children =
        |doc: usize, parent_key: u32, depth: usize, queue: &mut VecDeque<Pending>| {
            let mut kids: Vec<(usize, usize)> = owners
                .iter()
                .filter(|(_, (owner_doc, _))| *owner_doc == doc)
                .map(|(child, (_, node))| (*child, *node))
                .collect();
            // Document order of the `<iframe>` elements.
            kids.sort_by_key(|(_, node)| *node);
            for (child, node) in kids {
                let owner = dom
                    .documents
                    .get(doc)
                    .and_then(|d| d.nodes.backend_node_id.get(node))
                    .copied();
                if let Some(owner) = owner {
                    queue.push_back(Pending {
                        doc: child,
                        parent_key,
                        owner,
                        depth: depth + 1,
                    });
                }
            }
        };
    push_children(0, root_key, depth, &mut queue);
    let mut batch: Vec<(Pending, DocFacts, FrameEntry)> = Vec::new();
    while let Some(p) = queue.pop_front() {
        if p.depth > MAX_FRAME_DEPTH || out.len() + batch.len() >= MAX_FRAMES {
            tracing::debug!(
                depth = p.depth,
                "frame left out: the frame bounds are reached"
            );
            continue;
        }
        let Some(f) = facts::document(dom, p.doc) else {
            continue;
        };
        let document = f.backend.first().copied().unwrap_or_default();
        let key = registry.key_for(session_id, &f.frame_id, document);
        key_of_doc.insert(p.doc, key);
        push_children(p.doc, key, p.depth, &mut queue);
        let entry = FrameEntry {
            key,
            frame_id: f.frame_id.clone(),
            session: session_id.map(str::to_owned),
            parent: Some(p.parent_key),
            owner: Some(NodeKey::Backend(p.owner)),
            document,
            world: None,
            url: f.url.clone(),
            out_of_process: false,
        };
        batch.push((p, f, entry));
    }
    let trees = futures_util::future::join_all(
        batch
            .iter()
            .map(|(_, _, e)| session.frame_ax_tree(&e.frame_id)),
    )
    .await;
    for ((p, f, entry), ax) in batch.into_iter().zip(trees) {
        let Some(ax) = soft("its accessibility tree", ax)? else {
            continue;
        };
        out.push(FrameRead {
            entry,
            ax,
            facts: f,
            rect: (0.0, 0.0, 0.0, 0.0),
            depth: p.depth,
        });
    }
    Ok(())
}

/// Whether some frame read has an `<iframe>` whose document was not read
/// (it is out of process, or not loaded yet).
fn has_unread_iframes(frames: &[FrameRead]) -> bool {
    let owners: HashSet<(Option<&str>, i64)> = frames
        .iter()
        .filter_map(|f| {
            let parent = frames
                .iter()
                .find(|p| Some(p.entry.key) == f.entry.parent)?;
            match f.entry.owner? {
                NodeKey::Backend(b) => Some((parent.entry.session.as_deref(), b)),
                NodeKey::World(_) => None,
            }
        })
        .collect();
    frames.iter().any(|f| {
        f.ax.iter().any(|n| {
            n.role.as_ref().and_then(|r| r.text()).as_deref() == Some("Iframe")
                && n.backend_dom_node_id
                    .is_some_and(|b| !owners.contains(&(f.entry.session.as_deref(), b)))
        })
    })
}

/// Reads the page's frames. `main` is the main frame's accessibility tree
/// and `dom` the page session's snapshot, taken together; the registry
/// keeps frame keys and out-of-process sessions across observations.
pub(crate) async fn read_page(
    page: &CdpSession,
    browser: &CdpSession,
    registry: &mut FrameRegistry,
    main: Vec<AxNode>,
    dom: &DomSnapshot,
    viewport: CssRect,
) -> Result<Vec<FrameRead>, CdpError> {
    let mut out: Vec<FrameRead> = Vec::new();
    let main_facts = facts::document(dom, 0).unwrap_or_default();
    let root = FrameEntry {
        key: 0,
        frame_id: main_facts.frame_id.clone(),
        session: None,
        parent: None,
        owner: None,
        document: main_facts.backend.first().copied().unwrap_or_default(),
        world: None,
        url: main_facts.url.clone(),
        out_of_process: false,
    };
    read_process(page, None, root, main, dom, 0, registry, &mut out).await?;
    if let Some(m) = out.first_mut() {
        m.rect = viewport;
    }
    let mut live_targets: HashSet<String> = HashSet::new();
    if has_unread_iframes(&out) {
        let targets = browser.get_targets().await?;
        let iframes: Vec<_> = targets.into_iter().filter(|t| t.kind == "iframe").collect();
        live_targets = iframes.iter().map(|t| t.target_id.clone()).collect();
        let mut done: HashSet<String> = HashSet::new();
        // Each round reads the targets whose parent frame has been read.
        for _ in 0..MAX_FRAME_DEPTH {
            let ready: Vec<_> = iframes
                .iter()
                .filter(|t| !done.contains(&t.target_id))
                .filter_map(|t| {
                    let parent = t.parent_frame_id.as_deref()?;
                    let p = out.iter().find(|f| f.entry.frame_id == parent)?;
                    Some((t, p.entry.key, p.entry.session.clone(), p.depth))
                })
                .collect();
            if ready.is_empty() {
                break;
            }
            for (target, parent_key, parent_session, parent_depth) in ready {
                done.insert(target.target_id.clone());
                if out.len() >= MAX_FRAMES || parent_depth + 1 > MAX_FRAME_DEPTH {
                    tracing::debug!("frame left out: the frame bounds are reached");
                    continue;
                }
                let attached = registry.attach(browser, page, &target.target_id).await;
                let Some(session) = soft("attaching to it", attached)? else {
                    continue;
                };
                let session_id = session.session_id().unwrap_or_default().to_owned();
                let parent = match &parent_session {
                    None => page.clone(),
                    Some(id) => CdpSession::attached(page.client().clone(), id.clone())
                        .with_timeout(page.timeout()),
                };
                let read = tokio::try_join!(
                    session.full_ax_tree(),
                    session.capture_dom_snapshot(),
                    parent.frame_owner(&target.target_id),
                );
                let Some((ax, sub, owner)) = soft("reading it", read)? else {
                    continue;
                };
                let Some(owner) = owner else {
                    continue;
                };
                let Some(sub_facts) = facts::document(&sub, 0) else {
                    continue;
                };
                let document = sub_facts.backend.first().copied().unwrap_or_default();
                let key = registry.key_for(Some(&session_id), &target.target_id, document);
                let entry = FrameEntry {
                    key,
                    frame_id: target.target_id.clone(),
                    session: Some(session_id.clone()),
                    parent: Some(parent_key),
                    owner: Some(NodeKey::Backend(owner)),
                    document,
                    world: None,
                    url: sub_facts.url.clone(),
                    out_of_process: true,
                };
                read_process(
                    &session,
                    Some(&session_id),
                    entry,
                    ax,
                    &sub,
                    parent_depth + 1,
                    registry,
                    &mut out,
                )
                .await?;
            }
        }
    }
    for stale in registry.forget_targets_except(&live_targets) {
        // The target is gone; detaching may fail, and that is fine.
        let _ = browser.detach_from_target(&stale).await;
    }
    place(page, &mut out).await?;
    registry.set_table(out.iter().map(|f| f.entry.clone()).collect());
    Ok(out)
}

/// Sets each frame's viewport in the page: its `<iframe>`'s content box
/// in the parent's viewport, plus the parent's position. Frames whose
/// `<iframe>` cannot be measured are left out.
async fn place(page: &CdpSession, frames: &mut Vec<FrameRead>) -> Result<(), CdpError> {
    let boxes = futures_util::future::join_all(frames.iter().map(|f| async {
        let (Some(parent_key), Some(owner)) = (f.entry.parent, f.entry.owner) else {
            return Ok(None);
        };
        let Some(parent) = frames.iter().find(|p| p.entry.key == parent_key) else {
            return Ok(None);
        };
        let session = session_for(page, &parent.entry);
        call_on_node::<FramePoint>(
            &session,
            parent.entry.world,
            owner,
            &scripts::frame_point(),
            &[json!(0), json!(0), json!(false)],
        )
        .await
    }))
    .await;
    let mut measured: HashMap<u32, (f64, f64, f64, f64)> = HashMap::new();
    for (f, b) in frames.iter().zip(boxes) {
        match soft("measuring its <iframe>", b)? {
            Some(Some(b)) if b.width > 0.0 && b.height > 0.0 => {
                measured.insert(f.entry.key, (b.left, b.top, b.width, b.height));
            }
            Some(Some(_)) => tracing::debug!("frame left out: its <iframe> is not rendered"),
            _ => {}
        }
    }
    // Parents come before their children.
    let mut placed: HashMap<u32, CssRect> = HashMap::new();
    let mut keep = vec![false; frames.len()];
    for (i, f) in frames.iter_mut().enumerate() {
        match f.entry.parent {
            None => {
                placed.insert(f.entry.key, f.rect);
                keep[i] = true;
            }
            Some(parent) => {
                let (Some(p), Some(b)) = (placed.get(&parent), measured.get(&f.entry.key)) else {
                    continue;
                };
                f.rect = (p.0 + b.0, p.1 + b.1, b.2, b.3);
                placed.insert(f.entry.key, f.rect);
                keep[i] = true;
            }
        }
    }
    let mut i = 0;
    frames.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    Ok(())
}

/// Maps point (x, y) of frame `key`'s viewport to the page's viewport
/// (CSS pixels), scrolling each `<iframe>` into view as needed and
/// checking that each `<iframe>` is what is hit at the point in its
/// parent. The inner `Err` says why the point cannot be reached
/// ([`FramePathError`]); the outer one is a DevTools failure.
pub(crate) async fn point_in_page(
    page: &CdpSession,
    registry: &FrameRegistry,
    key: u32,
    x: f64,
    y: f64,
) -> Result<Result<(f64, f64), FramePathError>, CdpError> {
    let (mut x, mut y) = (x, y);
    let mut at = key;
    for _ in 0..=MAX_FRAME_DEPTH {
        let Some(entry) = registry.entry(at) else {
            return Ok(Err(FramePathError::Gone));
        };
        let (Some(parent_key), Some(owner)) = (entry.parent, entry.owner) else {
            return Ok(Ok((x, y)));
        };
        let Some(parent) = registry.entry(parent_key) else {
            return Ok(Err(FramePathError::Gone));
        };
        let session = session_for(page, parent);
        let Some(p) = call_on_node::<FramePoint>(
            &session,
            parent.world,
            owner,
            &scripts::frame_point(),
            &[json!(x), json!(y), json!(true)],
        )
        .await?
        else {
            return Ok(Err(FramePathError::Gone));
        };
        if !p.hit {
            return Ok(Err(FramePathError::Covered(p.covering)));
        }
        (x, y) = (p.x, p.y);
        at = parent_key;
    }
    Ok(Err(FramePathError::Gone))
}

/// Why a point of a frame cannot be reached from the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FramePathError {
    /// A frame of the path left the page.
    Gone,
    /// Something covers an `<iframe>` of the path at the point (the
    /// covering element, when known).
    Covered(Option<String>),
}
