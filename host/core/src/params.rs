//! Strict params: every params object is validated against its method's
//! JSON Schema (generated from the protocol types) before serde decodes
//! it. serde alone is lenient where the schema is not: it fills a struct
//! from an array (`"client": ["x", "1"]`) and reads integer enum tags. The
//! schema is the contract clients are checked against, so the host holds
//! itself to it too.
//!
//! Validators are compiled once per method, on first use. Error messages
//! name the location, never the offending value (it could be a secret).

use std::collections::HashMap;
use std::sync::OnceLock;

use devicerail_host_protocol::methods::{invalid_params, parse_params};
use devicerail_host_protocol::{METHODS, MethodId, MethodSpec, RpcError, RpcParams};
use serde::de::DeserializeOwned;
use serde_json::Value;

fn validators() -> &'static HashMap<MethodId, jsonschema::Validator> {
    static VALIDATORS: OnceLock<HashMap<MethodId, jsonschema::Validator>> = OnceLock::new();
    VALIDATORS.get_or_init(|| {
        METHODS
            .iter()
            .filter_map(|spec| {
                let schema = spec.id.params_schema()?;
                let schema = serde_json::to_value(schema).ok()?;
                match jsonschema::validator_for(&schema) {
                    Ok(v) => Some((spec.id, v)),
                    Err(e) => {
                        tracing::error!(
                            method = spec.name,
                            "the params schema does not compile: {e}"
                        );
                        None
                    }
                }
            })
            .collect()
    })
}

/// Checks `params` against the method's schema (objects only: arrays and
/// the no-params rules are [`parse_params`]'s).
pub(crate) fn validate(
    spec: &MethodSpec,
    params: Option<RpcParams>,
) -> Result<Option<RpcParams>, RpcError> {
    let Some(RpcParams::Object(map)) = params else {
        return Ok(params);
    };
    let Some(validator) = validators().get(&spec.id) else {
        return Ok(Some(RpcParams::Object(map)));
    };
    let value = Value::Object(map);
    if let Some(e) = validator.iter_errors(&value).next() {
        let path = e.instance_path().to_string();
        let at = if path.is_empty() {
            "params".to_owned()
        } else {
            format!("params{path}")
        };
        return Err(invalid_params(spec.name, format!("{at}: {}", e.masked())));
    }
    let Value::Object(map) = value else {
        unreachable!("validated an object")
    };
    Ok(Some(RpcParams::Object(map)))
}

/// Validates, then decodes the method's params.
pub(crate) fn decode<P: DeserializeOwned>(
    spec: &MethodSpec,
    params: Option<RpcParams>,
) -> Result<P, RpcError> {
    parse_params(spec, validate(spec, params)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_protocol::{DeviceSelectParams, HelloParams};
    use serde_json::json;

    fn obj(v: Value) -> Option<RpcParams> {
        match v {
            Value::Object(m) => Some(RpcParams::Object(m)),
            _ => None,
        }
    }

    #[test]
    fn arrays_are_not_objects() {
        let spec = MethodId::SystemHello.spec();
        let good = json!({
            "client": { "name": "x", "version": "1" },
            "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] }
        });
        assert!(decode::<HelloParams>(spec, obj(good.clone())).is_ok());
        let mut bad = good;
        bad["client"] = json!(["x", "1"]);
        // serde alone accepts it...
        assert!(serde_json::from_value::<HelloParams>(bad.clone()).is_ok());
        // ...the schema does not.
        let e = decode::<HelloParams>(spec, obj(bad)).expect_err("refused");
        assert_eq!(e.data.code, "invalid_params");
        assert!(e.message.contains("/client"), "{}", e.message);
    }

    #[test]
    fn messages_do_not_echo_values() {
        let spec = MethodId::DeviceSelect.spec();
        let e = decode::<DeviceSelectParams>(spec, obj(json!({ "deviceId": "s3cr3t", "x": 1 })))
            .expect_err("refused");
        assert!(!e.message.contains("s3cr3t"), "{}", e.message);
    }

    #[test]
    fn every_params_schema_compiles() {
        let with_params = METHODS
            .iter()
            .filter(|m| m.id.params_schema().is_some())
            .count();
        assert_eq!(validators().len(), with_params);
    }
}
