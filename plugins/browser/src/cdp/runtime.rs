//! `Runtime` domain: evaluating script in the page.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::error::CdpError;
use super::session::CdpSession;

/// A script's result or thrown exception.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Evaluated {
    result: RemoteObject,
    #[serde(default)]
    exception_details: Option<ExceptionDetails>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RemoteObject {
    #[serde(default)]
    value: Option<Value>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    object_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IsolatedWorld {
    execution_context_id: i64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExceptionDetails {
    #[serde(default)]
    text: String,
    #[serde(default)]
    exception: Option<RemoteObject>,
}

/// Where a function is called: with `this` bound to a remote object, or
/// in an execution context (a frame's world).
#[derive(Debug, Clone, Copy)]
pub(crate) enum On<'a> {
    /// `this` is this remote object.
    Object(&'a str),
    /// In this execution context.
    Context(i64),
}

/// The script's result, or what it threw as an error.
fn returned(method: &str, e: Evaluated) -> Result<RemoteObject, CdpError> {
    if let Some(ex) = e.exception_details {
        let detail = ex.exception.and_then(|o| o.description).unwrap_or(ex.text);
        return Err(CdpError::Protocol {
            method: method.to_owned(),
            code: 0,
            message: format!("the script threw: {detail}"),
        });
    }
    Ok(e.result)
}

fn decode<R: DeserializeOwned>(method: &str, e: Evaluated) -> Result<R, CdpError> {
    let value = returned(method, e)?.value.unwrap_or(Value::Null);
    serde_json::from_value(value).map_err(|err| CdpError::Decode {
        method: method.to_owned(),
        reason: err.to_string(),
    })
}

impl CdpSession {
    /// Evaluates `expression` in the page's main world (promises awaited)
    /// and returns its value as JSON.
    pub async fn evaluate<R: DeserializeOwned>(&self, expression: &str) -> Result<R, CdpError> {
        self.evaluate_where(None, expression).await
    }

    /// Evaluates `expression` in execution context `context` and returns
    /// its (awaited) value as JSON.
    pub(crate) async fn evaluate_in<R: DeserializeOwned>(
        &self,
        context: i64,
        expression: &str,
    ) -> Result<R, CdpError> {
        self.evaluate_where(Some(context), expression).await
    }

    /// The one `Runtime.evaluate`: by value, promises awaited, in
    /// `context` or the main world.
    async fn evaluate_where<R: DeserializeOwned>(
        &self,
        context: Option<i64>,
        expression: &str,
    ) -> Result<R, CdpError> {
        let mut params = json!({
            "expression": expression,
            "returnByValue": true,
            "awaitPromise": true,
        });
        if let Some(c) = context {
            params["contextId"] = json!(c);
        }
        let e: Evaluated = self.send("Runtime.evaluate", params).await?;
        decode("Runtime.evaluate", e)
    }

    /// Calls `function` `on` an object or in a context with `args` passed
    /// by value; returns its (awaited) value as JSON.
    pub(crate) async fn call_function_on<R: DeserializeOwned>(
        &self,
        on: On<'_>,
        function: &str,
        args: &[Value],
    ) -> Result<R, CdpError> {
        let e = self.call_function(on, function, args, true).await?;
        decode("Runtime.callFunctionOn", e)
    }

    /// Calls `function` like [`Self::call_function_on`] and keeps the
    /// object it returns (`None` when it returns null or undefined), in
    /// the object group the driver releases.
    pub(crate) async fn call_function_for_object(
        &self,
        on: On<'_>,
        function: &str,
        args: &[Value],
    ) -> Result<Option<String>, CdpError> {
        let e = self.call_function(on, function, args, false).await?;
        Ok(returned("Runtime.callFunctionOn", e)?.object_id)
    }

    /// The one `Runtime.callFunctionOn`: promises awaited, the result by
    /// value or as a remote object.
    async fn call_function(
        &self,
        on: On<'_>,
        function: &str,
        args: &[Value],
        by_value: bool,
    ) -> Result<Evaluated, CdpError> {
        let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
        let mut params = json!({
            "functionDeclaration": function,
            "arguments": arguments,
            "returnByValue": by_value,
            "awaitPromise": true,
        });
        match on {
            On::Object(id) => params["objectId"] = json!(id),
            On::Context(c) => params["executionContextId"] = json!(c),
        }
        if !by_value {
            params["objectGroup"] = json!("devicerail");
        }
        self.send("Runtime.callFunctionOn", params).await
    }

    /// Creates an isolated world (a script context of its own, sharing
    /// only the DOM) in frame `frame_id`; answers its execution context id.
    pub(crate) async fn create_isolated_world(
        &self,
        frame_id: &str,
        name: &str,
    ) -> Result<i64, CdpError> {
        let w: IsolatedWorld = self
            .send(
                "Page.createIsolatedWorld",
                json!({ "frameId": frame_id, "worldName": name, "grantUniveralAccess": false }),
            )
            .await?;
        Ok(w.execution_context_id)
    }

    /// Lets the page's remote object go.
    pub(crate) async fn release_object(&self, object_id: &str) -> Result<(), CdpError> {
        self.run("Runtime.releaseObject", json!({ "objectId": object_id }))
            .await
    }
}
