use serde_json::json;

use super::*;

#[test]
fn smoke() {
    let body = encode_object(
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}),
    );
    assert!(body.is_ok());
}
