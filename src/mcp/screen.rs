//! JSON-RPC by the book, before rmcp sees a message: a body that is not JSON is
//! a parse error (-32700), a message that is not a JSON-RPC 2.0 object an
//! invalid request (-32600), and a `tools/call` whose params are not a name and
//! an object of arguments invalid params (-32602), each answered with a
//! JSON-RPC error body. rmcp would answer the first with HTTP 415 plain text
//! and the last with "method not found". The same screen serves stdio and
//! streamable HTTP, so both transports answer alike.

use serde_json::{Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;
/// Not a JSON-RPC code of the base spec: the session the request names is gone.
pub const SESSION_NOT_FOUND: i64 = -32001;

/// A JSON-RPC error response; `id` is null when the message had none to echo.
pub fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The refusal a message gets before it reaches the server, or None to pass it on.
pub fn screen(body: &[u8]) -> Option<Refusal> {
    let message: Value = match serde_json::from_slice(body) {
        Ok(message) => message,
        Err(error) => {
            return Some(Refusal::without_id(
                PARSE_ERROR,
                &format!("Parse error: the message is not JSON ({error})"),
            ));
        }
    };
    let Value::Object(fields) = &message else {
        return Some(Refusal::without_id(
            INVALID_REQUEST,
            "Invalid Request: a message is one JSON-RPC 2.0 object (batches are not supported)",
        ));
    };
    let id = fields.get("id").cloned().unwrap_or(Value::Null);
    if fields.get("jsonrpc") != Some(&json!("2.0")) {
        return Some(Refusal::with_id(
            id,
            INVALID_REQUEST,
            "Invalid Request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    if fields.get("method").and_then(Value::as_str) == Some("tools/call") {
        let params = fields.get("params");
        let problem = match params {
            Some(Value::Object(params)) => match (params.get("name"), params.get("arguments")) {
                (Some(Value::String(_)), None | Some(Value::Object(_)) | Some(Value::Null)) => None,
                (Some(Value::String(_)), Some(other)) => Some(format!(
                    "params.arguments must be an object of named arguments, got {}",
                    crate::tools::input::kind_of(other)
                )),
                _ => Some("params.name must be the name of a tool".to_string()),
            },
            Some(other) => Some(format!(
                "params must be an object with a tool name and its arguments, got {}",
                crate::tools::input::kind_of(other)
            )),
            None => Some("params with a tool name are required".to_string()),
        };
        if let Some(problem) = problem {
            return Some(Refusal::with_id(
                id,
                INVALID_PARAMS,
                &format!("Invalid params: {problem}"),
            ));
        }
    }
    None
}

/// A message answered by the screen: the JSON-RPC error and whether it could be
/// tied to a request (HTTP answers those 200, the others 400).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub body: Value,
    pub has_id: bool,
}

impl Refusal {
    fn without_id(code: i64, message: &str) -> Refusal {
        Refusal {
            body: error_response(Value::Null, code, message),
            has_id: false,
        }
    }

    fn with_id(id: Value, code: i64, message: &str) -> Refusal {
        let has_id = !id.is_null();
        Refusal {
            body: error_response(id, code, message),
            has_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Option<i64> {
        screen(body.as_bytes()).and_then(|refusal| refusal.body["error"]["code"].as_i64())
    }

    #[test]
    fn malformed_and_invalid_messages_get_their_json_rpc_codes() {
        assert_eq!(code("{not json"), Some(PARSE_ERROR));
        assert_eq!(code(""), Some(PARSE_ERROR));
        assert_eq!(code("[]"), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"id":1,"method":"ping"}"#), Some(INVALID_REQUEST));
        let array = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"cos_hub_health","arguments":[1,2]}}"#;
        assert_eq!(code(array), Some(INVALID_PARAMS));
        let refusal = screen(array.as_bytes()).unwrap();
        assert_eq!(refusal.body["id"], 7, "the id is echoed");
        assert!(refusal.has_id);
        assert!(
            refusal.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("got a list")
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#),
            Some(INVALID_PARAMS)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#),
            Some(INVALID_PARAMS)
        );
    }

    #[test]
    fn good_messages_pass() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cos_hub_health"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
        ] {
            assert_eq!(screen(body.as_bytes()), None, "{body}");
        }
    }
}
