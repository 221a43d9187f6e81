//! Walking every frame of the page with the in-page library: the whole
//! tree for an observation, or a search (a selector, the nodes under one
//! node, one node by id) that reads the live page instead of a bounded
//! snapshot.
//!
//! * The main frame is walked in the library's world of the page's
//!   session. Each `<iframe>` node a walk reports is mapped to its frame
//!   (`DOM.describeNode` on the element, cached per element) and walked
//!   in that frame's own world: in the same session when the frame is
//!   in the page's process (same-origin or not), else in the session of
//!   its out-of-process target (attached on first use, kept while the
//!   target lives).
//! * A frame's viewport in the page is its `<iframe>`'s content box (the
//!   parent walk measures it) plus the parent's position.
//! * Bounded like the accessibility path: at most [`MAX_FRAMES`] frames,
//!   [`MAX_FRAME_DEPTH`] deep. A frame that goes away while it is walked is
//!   left out, never a failed observation.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Value, json};

use crate::cdp::{CdpError, CdpSession};
use crate::frame_reader::session_for;
use crate::frames::{FrameEntry, FrameRegistry, MAX_FRAME_DEPTH, MAX_FRAMES, NodeAddress, NodeKey};
use crate::ui_tree::facts::CssRect;
use crate::ui_tree::walked::{WalkedDoc, WalkedInput};
use crate::world::{self, Worlds};

/// What to read from each frame.
#[derive(Debug, Clone)]
pub(crate) enum Ask {
    /// The whole tree.
    Tree,
    /// The nodes matching `selector` (the protocol's selector as JSON),
    /// at most `limit` per frame, under the node `within` when given.
    Query {
        selector: Value,
        limit: usize,
        within: Option<NodeAddress>,
    },
    /// One node, by its address.
    Node(NodeAddress),
}

impl Ask {
    /// The library function and its argument for frame `key`.
    fn call_for(&self, key: u32) -> (&'static str, Value) {
        match self {
            Ask::Tree => (world::TREE, json!({})),
            Ask::Query {
                selector,
                limit,
                within,
            } => match within {
                None => (
                    world::QUERY,
                    json!({ "selector": selector, "limit": limit }),
                ),
                Some(w) if w.frame == key => match w.node {
                    NodeKey::World(id) => (
                        world::QUERY,
                        json!({ "selector": selector, "limit": limit, "within": id }),
                    ),
                    NodeKey::Backend(_) => (world::QUERY, json!({ "ids": [], "limit": 0 })),
                },
                // Searched only for the way to the frame of `within`.
                Some(_) => (world::QUERY, json!({ "ids": [], "limit": 0 })),
            },
            Ask::Node(addr) => match addr.node {
                NodeKey::World(id) if addr.frame == key => {
                    (world::QUERY, json!({ "ids": [id], "limit": 1 }))
                }
                _ => (world::QUERY, json!({ "ids": [], "limit": 0 })),
            },
        }
    }
}

/// One frame walked.
#[derive(Debug)]
pub(crate) struct FrameWalk {
    pub(crate) entry: FrameEntry,
    pub(crate) doc: WalkedDoc,
    /// Its viewport in CSS pixels of the page's viewport.
    pub(crate) rect: CssRect,
    /// The parent frame's key and the `<iframe>` node's index there.
    pub(crate) owner: Option<(u32, usize)>,
    depth: usize,
}

impl FrameWalk {
    /// The frame as the tree builder takes it.
    pub(crate) fn input(&self) -> WalkedInput<'_> {
        WalkedInput {
            key: self.entry.key,
            doc: &self.doc,
            rect: self.rect,
            owner: self.owner,
        }
    }
}

/// The `<iframe>` elements already mapped to their frame ids, by (frame
/// key, the parent's document, library id of the element). The document
/// is part of the key: a new document numbers its elements from one
/// again, and its frames have new ids.
#[derive(Debug, Default)]
pub(crate) struct OwnerCache {
    frames: HashMap<(u32, i64, u64), String>,
}

impl OwnerCache {
    /// Most elements remembered; the cache starts over past it.
    const MAX: usize = 4096;

    fn get(&self, key: u32, document: i64, id: u64) -> Option<&String> {
        self.frames.get(&(key, document, id))
    }

    fn put(&mut self, key: u32, document: i64, id: u64, frame_id: String) {
        if self.frames.len() >= Self::MAX {
            self.frames.clear();
        }
        self.frames.insert((key, document, id), frame_id);
    }
}

/// The mutable state a walk keeps across observations.
pub(crate) struct WalkState<'a> {
    pub(crate) worlds: &'a mut Worlds,
    pub(crate) registry: &'a mut FrameRegistry,
    pub(crate) owners: &'a mut OwnerCache,
}

/// A failure that leaves a frame out instead of failing the walk.
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

fn decode(text: &str) -> Result<WalkedDoc, CdpError> {
    serde_json::from_str(text).map_err(|e| CdpError::Decode {
        method: "Runtime.callFunctionOn".into(),
        reason: format!("the page walk answered unexpectedly: {e}"),
    })
}

/// A child frame waiting to be walked.
struct Pending {
    parent: usize,
    node: usize,
    rect: CssRect,
    depth: usize,
}

/// Walks the page: the main frame (`main_frame_id`, in `page`'s session,
/// viewport `viewport`) and every frame under it. Errors of the main
/// frame fail the walk (the caller may fall back to the accessibility
/// tree); other frames that fail are left out.
pub(crate) async fn walk_page(
    page: &CdpSession,
    browser: &CdpSession,
    main_frame_id: &str,
    state: &mut WalkState<'_>,
    viewport: CssRect,
    ask: &Ask,
) -> Result<Vec<FrameWalk>, CdpError> {
    let (function, arg) = ask.call_for(0);
    let (context, text) = state
        .worlds
        .call_text(page, main_frame_id, function, &arg)
        .await?;
    let doc = decode(&text)?;
    let mut out = vec![FrameWalk {
        entry: FrameEntry {
            key: 0,
            frame_id: main_frame_id.to_owned(),
            session: None,
            parent: None,
            owner: None,
            document: context,
            world: Some(context),
            url: doc.url.clone(),
            out_of_process: false,
        },
        doc,
        rect: viewport,
        owner: None,
        depth: 0,
    }];
    let mut queue: VecDeque<Pending> = VecDeque::new();
    let enqueue = |index: usize, f: &FrameWalk, queue: &mut VecDeque<Pending>| {
        for fr in &f.doc.frames {
            queue.push_back(Pending {
                parent: index,
                node: fr.0,
                rect: (f.rect.0 + fr.1, f.rect.1 + fr.2, fr.3, fr.4),
                depth: f.depth + 1,
            });
        }
    };
    enqueue(0, &out[0], &mut queue);
    let mut out_of_process: HashSet<String> = HashSet::new();
    while let Some(p) = queue.pop_front() {
        if out.len() >= MAX_FRAMES || p.depth > MAX_FRAME_DEPTH {
            tracing::debug!("frame left out: the frame bounds are reached");
            continue;
        }
        if p.rect.2 <= 0.0 || p.rect.3 <= 0.0 {
            tracing::debug!("frame left out: its <iframe> is not rendered");
            continue;
        }
        let Some(walked) = walk_child(page, browser, state, &out, &p, ask).await? else {
            continue;
        };
        if walked.entry.out_of_process {
            out_of_process.insert(walked.entry.frame_id.clone());
        }
        let index = out.len();
        out.push(walked);
        enqueue(index, &out[index], &mut queue);
    }
    match ask {
        Ask::Tree => {
            for stale in state.registry.forget_targets_except(&out_of_process) {
                state.worlds.forget_session(&stale);
                // The target is gone; detaching may fail, and that is fine.
                let _ = browser.detach_from_target(&stale).await;
            }
            state
                .registry
                .set_table(out.iter().map(|f| f.entry.clone()).collect());
        }
        _ => state
            .registry
            .merge(out.iter().map(|f| f.entry.clone()).collect()),
    }
    Ok(out)
}

/// Walks the frame of `<iframe>` node `p.node` of frame `p.parent`
/// (`None`: left out).
async fn walk_child(
    page: &CdpSession,
    browser: &CdpSession,
    state: &mut WalkState<'_>,
    out: &[FrameWalk],
    p: &Pending,
    ask: &Ask,
) -> Result<Option<FrameWalk>, CdpError> {
    let Some(parent) = out.get(p.parent) else {
        return Ok(None);
    };
    let Some(owner_id) = parent.doc.nodes.get(p.node).map(|n| n.0) else {
        return Ok(None);
    };
    let parent_session = session_for(page, &parent.entry);
    let frame_id = match state
        .owners
        .get(parent.entry.key, parent.entry.document, owner_id)
    {
        Some(f) => f.clone(),
        None => {
            let Some(context) = parent.entry.world else {
                return Ok(None);
            };
            let Some(object) = soft(
                "finding its <iframe>",
                world::node_object(&parent_session, context, owner_id).await,
            )?
            .flatten() else {
                return Ok(None);
            };
            let described = parent_session.owned_frame_id(&object).await;
            let _ = parent_session.release_object(&object).await;
            let Some(frame_id) = soft("describing its <iframe>", described)?.flatten() else {
                return Ok(None);
            };
            state.owners.put(
                parent.entry.key,
                parent.entry.document,
                owner_id,
                frame_id.clone(),
            );
            frame_id
        }
    };
    // In the parent's process, or in a process of its own.
    let (session, session_id, out_of_process) =
        match state.worlds.context(&parent_session, &frame_id).await {
            Ok(_) => (
                parent_session.clone(),
                parent.entry.session.clone(),
                parent.entry.out_of_process,
            ),
            Err(CdpError::Protocol { .. }) => {
                let attached = state.registry.attach(browser, page, &frame_id).await;
                let Some(session) = soft("attaching to it", attached)? else {
                    return Ok(None);
                };
                let session_id = session.session_id().map(str::to_owned);
                (session, session_id, true)
            }
            Err(e) => return Err(e),
        };
    // The key depends on the world (the document), known once it exists.
    let Some(context) = soft(
        "making its world",
        state.worlds.context(&session, &frame_id).await,
    )?
    else {
        return Ok(None);
    };
    let key = state
        .registry
        .key_for(session_id.as_deref(), &frame_id, context);
    let (function, arg) = ask.call_for(key);
    let Some((context, text)) = soft(
        "walking it",
        state
            .worlds
            .call_text(&session, &frame_id, function, &arg)
            .await,
    )?
    else {
        return Ok(None);
    };
    let Some(doc) = soft("decoding its walk", decode(&text))? else {
        return Ok(None);
    };
    // A world made again (a new document) gets its own key.
    let key = state
        .registry
        .key_for(session_id.as_deref(), &frame_id, context);
    Ok(Some(FrameWalk {
        entry: FrameEntry {
            key,
            frame_id,
            session: session_id,
            parent: Some(parent.entry.key),
            owner: Some(NodeKey::World(owner_id)),
            document: context,
            world: Some(context),
            url: doc.url.clone(),
            out_of_process,
        },
        doc,
        rect: p.rect,
        owner: Some((parent.entry.key, p.node)),
        depth: p.depth,
    }))
}
