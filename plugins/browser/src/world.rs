//! The driver's in-page library (`agent.js`) and the isolated worlds it
//! lives in: one per frame document, created on first use and cached by
//! (session, frame id) until the document goes away (its execution
//! context is then gone, and the next call makes a new world).
//!
//! Page scripts cannot see or change an isolated world's globals, so the
//! library is safe from pages that redefine built-ins; only the DOM is
//! shared. What it must never do: call into the page's own world, or
//! return secrets (the library masks password values itself).

use std::collections::HashMap;

use serde_json::Value;

use crate::cdp::{CdpError, CdpSession, On};

/// The library's source: an expression that installs `__drAgent` in the
/// world it is evaluated in (and answers its version).
pub(crate) const LIBRARY: &str = include_str!("agent.js");

/// The isolated world's name (shown by DevTools front-ends).
const WORLD_NAME: &str = "devicerail";

/// `function(opts)`: the whole tree of the world's document (JSON text).
pub(crate) const TREE: &str = "function(o) { return __drAgent.tree(o); }";
/// `function(query)`: the nodes matching a query (JSON text).
pub(crate) const QUERY: &str = "function(q) { return __drAgent.query(q); }";
/// `function(id)`: the node with a library id, by reference.
pub(crate) const NODE: &str = "function(i) { return __drAgent.node(i); }";

/// Execution contexts of the library's worlds, by (session, frame id).
#[derive(Debug, Default)]
pub(crate) struct Worlds {
    contexts: HashMap<(Option<String>, String), i64>,
}

/// Whether an error says the execution context (the document) is gone.
pub(crate) fn context_gone(e: &CdpError) -> bool {
    match e {
        CdpError::Protocol { message, code, .. } => {
            *code != 0
                && (message.contains("Cannot find context")
                    || message.contains("context was destroyed")
                    || message.contains("Cannot find execution context"))
        }
        _ => false,
    }
}

impl Worlds {
    /// The cached context of frame `frame_id` in `session`, if any.
    pub(crate) fn cached(&self, session: &CdpSession, frame_id: &str) -> Option<i64> {
        self.contexts
            .get(&(session.session_id().map(str::to_owned), frame_id.to_owned()))
            .copied()
    }

    /// The context of the library's world in frame `frame_id` of
    /// `session`'s process, made (and the library installed) if needed.
    pub(crate) async fn context(
        &mut self,
        session: &CdpSession,
        frame_id: &str,
    ) -> Result<i64, CdpError> {
        if let Some(c) = self.cached(session, frame_id) {
            return Ok(c);
        }
        let context = session.create_isolated_world(frame_id, WORLD_NAME).await?;
        let _version: Value = session.evaluate_in(context, LIBRARY).await?;
        self.contexts.insert(
            (session.session_id().map(str::to_owned), frame_id.to_owned()),
            context,
        );
        Ok(context)
    }

    /// Forgets the world of a frame (its document went away).
    pub(crate) fn forget(&mut self, session: &CdpSession, frame_id: &str) {
        self.contexts
            .remove(&(session.session_id().map(str::to_owned), frame_id.to_owned()));
    }

    /// Forgets every world of `session` (its target went away).
    pub(crate) fn forget_session(&mut self, session_id: &str) {
        self.contexts
            .retain(|(s, _), _| s.as_deref() != Some(session_id));
    }

    /// Calls `function(arg)` of the library in frame `frame_id`, making
    /// the world again once if the document changed since it was made.
    /// Answers the context used and the JSON text the function returned.
    pub(crate) async fn call_text(
        &mut self,
        session: &CdpSession,
        frame_id: &str,
        function: &str,
        arg: &Value,
    ) -> Result<(i64, String), CdpError> {
        let mut attempt = 0;
        loop {
            let context = self.context(session, frame_id).await?;
            match session
                .call_function_on::<String>(
                    On::Context(context),
                    function,
                    std::slice::from_ref(arg),
                )
                .await
            {
                Err(e) if attempt == 0 && (context_gone(&e) || missing_library(&e)) => {
                    self.forget(session, frame_id);
                    attempt += 1;
                }
                r => return r.map(|text| (context, text)),
            }
        }
    }
}

/// Whether a call failed because the world lost the library (a world
/// that was reused for a new document).
fn missing_library(e: &CdpError) -> bool {
    matches!(e, CdpError::Protocol { code: 0, message, .. } if message.contains("__drAgent"))
}

/// The object of library node `id` in world `context` (`None`: the node
/// left the document).
pub(crate) async fn node_object(
    session: &CdpSession,
    context: i64,
    id: u64,
) -> Result<Option<String>, CdpError> {
    session
        .call_function_for_object(On::Context(context), NODE, &[Value::from(id)])
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_contexts_are_told_from_script_errors() {
        let gone = CdpError::Protocol {
            method: "Runtime.callFunctionOn".into(),
            code: -32000,
            message: "Cannot find context with specified id".into(),
        };
        assert!(context_gone(&gone));
        let threw = CdpError::Protocol {
            method: "Runtime.callFunctionOn".into(),
            code: 0,
            message: "the script threw: ReferenceError: __drAgent is not defined".into(),
        };
        assert!(!context_gone(&threw));
        assert!(missing_library(&threw));
    }

    #[test]
    fn the_library_is_one_expression_with_its_version() {
        assert!(LIBRARY.contains("const VERSION = "));
        assert!(LIBRARY.trim_end().ends_with("})()"));
    }
}
