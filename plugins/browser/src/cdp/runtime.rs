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

    /// Lets the page's remote object go.
    pub(crate) async fn release_object(&self, object_id: &str) -> Result<(), CdpError> {
        self.run("Runtime.releaseObject", json!({ "objectId": object_id }))
            .await
    }
}
