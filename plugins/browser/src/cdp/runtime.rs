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

fn decode<R: DeserializeOwned>(method: &str, e: Evaluated) -> Result<R, CdpError> {
    if let Some(ex) = e.exception_details {
        let detail = ex.exception.and_then(|o| o.description).unwrap_or(ex.text);
        return Err(CdpError::Protocol {
            method: method.to_owned(),
            code: 0,
            message: format!("the script threw: {detail}"),
        });
    }
    serde_json::from_value(e.result.value.unwrap_or(Value::Null)).map_err(|err| CdpError::Decode {
        method: method.to_owned(),
        reason: err.to_string(),
    })
}

impl CdpSession {
    /// Evaluates `expression` in the page's main world (promises awaited)
    /// and returns its value as JSON.
    pub async fn evaluate<R: DeserializeOwned>(&self, expression: &str) -> Result<R, CdpError> {
        let e: Evaluated = self
            .send(
                "Runtime.evaluate",
                json!({
                    "expression": expression,
                    "returnByValue": true,
                    "awaitPromise": true,
                }),
            )
            .await?;
        decode("Runtime.evaluate", e)
    }

    /// Calls `function` with `this` bound to the remote object `object_id`,
    /// passing `args` by value; returns the (awaited) value as JSON.
    pub(crate) async fn call_function_on<R: DeserializeOwned>(
        &self,
        object_id: &str,
        function: &str,
        args: &[Value],
    ) -> Result<R, CdpError> {
        let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
        let e: Evaluated = self
            .send(
                "Runtime.callFunctionOn",
                json!({
                    "objectId": object_id,
                    "functionDeclaration": function,
                    "arguments": arguments,
                    "returnByValue": true,
                    "awaitPromise": true,
                }),
            )
            .await?;
        decode("Runtime.callFunctionOn", e)
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

    /// Evaluates `expression` in execution context `context` and returns
    /// its (awaited) value as JSON.
    pub(crate) async fn evaluate_in<R: DeserializeOwned>(
        &self,
        context: i64,
        expression: &str,
    ) -> Result<R, CdpError> {
        let e: Evaluated = self
            .send(
                "Runtime.evaluate",
                json!({
                    "expression": expression,
                    "contextId": context,
                    "returnByValue": true,
                    "awaitPromise": true,
                }),
            )
            .await?;
        decode("Runtime.evaluate", e)
    }

    /// Calls `function` in execution context `context` with `args` passed
    /// by value; returns the value as JSON.
    pub(crate) async fn call_in<R: DeserializeOwned>(
        &self,
        context: i64,
        function: &str,
        args: &[Value],
    ) -> Result<R, CdpError> {
        let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
        let e: Evaluated = self
            .send(
                "Runtime.callFunctionOn",
                json!({
                    "executionContextId": context,
                    "functionDeclaration": function,
                    "arguments": arguments,
                    "returnByValue": true,
                }),
            )
            .await?;
        decode("Runtime.callFunctionOn", e)
    }

    /// Calls `function` in execution context `context` and keeps the
    /// object it returns (`None` when it returns null or undefined).
    pub(crate) async fn call_in_for_object(
        &self,
        context: i64,
        function: &str,
        args: &[Value],
    ) -> Result<Option<String>, CdpError> {
        let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
        let e: Evaluated = self
            .send(
                "Runtime.callFunctionOn",
                json!({
                    "executionContextId": context,
                    "functionDeclaration": function,
                    "arguments": arguments,
                    "returnByValue": false,
                    "objectGroup": "devicerail",
                }),
            )
            .await?;
        if let Some(ex) = e.exception_details {
            let detail = ex.exception.and_then(|o| o.description).unwrap_or(ex.text);
            return Err(CdpError::Protocol {
                method: "Runtime.callFunctionOn".into(),
                code: 0,
                message: format!("the script threw: {detail}"),
            });
        }
        Ok(e.result.object_id)
    }

    /// Lets the page's remote object go.
    pub(crate) async fn release_object(&self, object_id: &str) -> Result<(), CdpError> {
        self.run("Runtime.releaseObject", json!({ "objectId": object_id }))
            .await
    }
}
