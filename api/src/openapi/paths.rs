//! REST paths and operations for the served resources, in the shape
//! kube-apiserver publishes them, rendered for Swagger 2.0 and OpenAPI 3.0.

use serde_json::{Map, Value};

use super::convert::{Flavor, Gvk};
use super::definitions::{DELETE_OPTIONS, PATCH, STATUS};
use super::OpenApiResource;

#[derive(Clone, Copy)]
enum Location {
    Path,
    Query,
}

struct Param {
    name: &'static str,
    location: Location,
    ty: &'static str,
    description: &'static str,
}

const NAME: Param = Param {
    name: "name",
    location: Location::Path,
    ty: "string",
    description: "name of the object",
};
const NAMESPACE: Param = Param {
    name: "namespace",
    location: Location::Path,
    ty: "string",
    description: "object name and auth scope, such as for teams and projects",
};
const PRETTY: Param = query(
    "pretty",
    "string",
    "If 'true', then the output is pretty printed.",
);
const ALLOW_WATCH_BOOKMARKS: Param = query(
    "allowWatchBookmarks",
    "boolean",
    "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag.",
);
const CONTINUE: Param = query(
    "continue",
    "string",
    "The continue option should be set when retrieving more results from the server: the value returned in the previous list response's metadata.continue.",
);
const DRY_RUN: Param = query(
    "dryRun",
    "string",
    "When present, indicates that modifications should not be persisted. Valid values are: All (process all dry run stages).",
);
const FIELD_MANAGER: Param = query(
    "fieldManager",
    "string",
    "fieldManager is a name associated with the actor or entity that is making these changes.",
);
const FIELD_SELECTOR: Param = query(
    "fieldSelector",
    "string",
    "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
);
const FIELD_VALIDATION: Param = query(
    "fieldValidation",
    "string",
    "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn (the default) and Strict.",
);
const FORCE: Param = query(
    "force",
    "boolean",
    "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.",
);
const GRACE_PERIOD_SECONDS: Param = query(
    "gracePeriodSeconds",
    "integer",
    "The duration in seconds before the object should be deleted. Zero means delete immediately.",
);
const IGNORE_STORE_READ_ERROR: Param = query(
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "boolean",
    "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.",
);
const LABEL_SELECTOR: Param = query(
    "labelSelector",
    "string",
    "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
);
const LIMIT: Param = query(
    "limit",
    "integer",
    "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata.",
);
const ORPHAN_DEPENDENTS: Param = query(
    "orphanDependents",
    "boolean",
    "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned.",
);
const PROPAGATION_POLICY: Param = query(
    "propagationPolicy",
    "string",
    "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background' and 'Foreground'.",
);
const RESOURCE_VERSION: Param = query(
    "resourceVersion",
    "string",
    "resourceVersion sets a constraint on what resource versions a request may be served from.",
);
const RESOURCE_VERSION_MATCH: Param = query(
    "resourceVersionMatch",
    "string",
    "resourceVersionMatch determines how resourceVersion is applied to list calls.",
);
const SEND_INITIAL_EVENTS: Param = query(
    "sendInitialEvents",
    "boolean",
    "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection.",
);
const TIMEOUT_SECONDS: Param = query(
    "timeoutSeconds",
    "integer",
    "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
);
const WATCH: Param = query(
    "watch",
    "boolean",
    "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
);

const fn query(name: &'static str, ty: &'static str, description: &'static str) -> Param {
    Param {
        name,
        location: Location::Query,
        ty,
        description,
    }
}

const LIST_PARAMS: &[&Param] = &[
    &ALLOW_WATCH_BOOKMARKS,
    &CONTINUE,
    &FIELD_SELECTOR,
    &LABEL_SELECTOR,
    &LIMIT,
    &RESOURCE_VERSION,
    &RESOURCE_VERSION_MATCH,
    &SEND_INITIAL_EVENTS,
    &TIMEOUT_SECONDS,
    &WATCH,
];
const WRITE_PARAMS: &[&Param] = &[&DRY_RUN, &FIELD_MANAGER, &FIELD_VALIDATION];
// kubectl decides whether the server validates fields by looking for
// `fieldValidation` among the PATCH operation's own parameters (not the
// path's), so it must be listed here.
const PATCH_PARAMS: &[&Param] = &[&DRY_RUN, &FIELD_MANAGER, &FIELD_VALIDATION, &FORCE];
const DELETE_PARAMS: &[&Param] = &[
    &DRY_RUN,
    &GRACE_PERIOD_SECONDS,
    &IGNORE_STORE_READ_ERROR,
    &ORPHAN_DEPENDENTS,
    &PROPAGATION_POLICY,
];
const DELETE_COLLECTION_PARAMS: &[&Param] = &[
    &CONTINUE,
    &DRY_RUN,
    &FIELD_SELECTOR,
    &GRACE_PERIOD_SECONDS,
    &IGNORE_STORE_READ_ERROR,
    &LABEL_SELECTOR,
    &LIMIT,
    &ORPHAN_DEPENDENTS,
    &PROPAGATION_POLICY,
    &RESOURCE_VERSION,
    &RESOURCE_VERSION_MATCH,
    &SEND_INITIAL_EVENTS,
    &TIMEOUT_SECONDS,
];

const PATCH_CONTENT_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];
const ANY_CONTENT_TYPE: &[&str] = &["*/*"];
const OBJECT_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];
const LIST_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

struct Operation {
    method: &'static str,
    id: String,
    action: &'static str,
    description: String,
    params: &'static [&'static Param],
    body: Option<(String, &'static [&'static str])>,
    responses: Vec<(&'static str, &'static str, String)>,
    produces: &'static [&'static str],
}

/// One REST path and the operations served on it.
pub(crate) struct PathItem {
    pub path: String,
    params: Vec<&'static Param>,
    operations: Vec<Operation>,
    gvk: Gvk,
    tag: String,
}

/// The document key of a group-version: `api/v1` or `apis/apps/v1`.
pub(crate) fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Upstream's operation-id infix for a group: `Core`, `Apps`,
/// `RbacAuthorization` (`.k8s.io` dropped, dots camel-cased).
fn group_camel(group: &str) -> String {
    let group = if group.is_empty() {
        "core"
    } else {
        group.strip_suffix(".k8s.io").unwrap_or(group)
    };
    group.split('.').map(capitalize).collect()
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Upstream's tag for a group-version: `core_v1`, `rbacAuthorization_v1`.
fn tag(group_camel: &str, version: &str) -> String {
    let mut chars = group_camel.chars();
    let lowered: String = match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    };
    format!("{lowered}_{version}")
}

/// The collection path, the item path and, for namespaced kinds, the
/// all-namespaces list path of `resource`, each with the operations its verbs
/// allow. Paths without operations are left out.
pub(crate) fn resource_paths(resource: &OpenApiResource, list_definition: &str) -> Vec<PathItem> {
    let has = |verb: &str| resource.verbs.iter().any(|v| v == verb);
    let group = group_camel(&resource.group);
    let tag = tag(&group, &resource.version);
    let gv = format!("{group}{}", capitalize(&resource.version));
    let kind = &resource.kind;
    let scope = if resource.namespaced {
        "Namespaced"
    } else {
        ""
    };
    let base = format!(
        "/{}",
        group_version_path(&resource.group, &resource.version)
    );
    let collection = if resource.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}", resource.resource)
    } else {
        format!("{base}/{}", resource.resource)
    };
    let gvk = Gvk {
        group: resource.group.clone(),
        version: resource.version.clone(),
        kind: kind.clone(),
    };
    let definition = &resource.definition;
    let scope_params = |with_name: bool| {
        let mut params: Vec<&'static Param> = Vec::new();
        if with_name {
            params.push(&NAME);
        }
        if resource.namespaced {
            params.push(&NAMESPACE);
        }
        params.push(&PRETTY);
        params
    };

    let mut collection_ops = Vec::new();
    if has("list") {
        collection_ops.push(Operation {
            method: "get",
            id: format!("list{gv}{scope}{kind}"),
            action: "list",
            description: format!("list or watch objects of kind {kind}"),
            params: LIST_PARAMS,
            body: None,
            responses: vec![("200", "OK", list_definition.to_owned())],
            produces: LIST_MEDIA_TYPES,
        });
    }
    if has("create") {
        collection_ops.push(Operation {
            method: "post",
            id: format!("create{gv}{scope}{kind}"),
            action: "post",
            description: format!("create a {kind}"),
            params: WRITE_PARAMS,
            body: Some((definition.clone(), ANY_CONTENT_TYPE)),
            responses: vec![
                ("200", "OK", definition.clone()),
                ("201", "Created", definition.clone()),
                ("202", "Accepted", definition.clone()),
            ],
            produces: OBJECT_MEDIA_TYPES,
        });
    }
    if has("deletecollection") {
        collection_ops.push(Operation {
            method: "delete",
            id: format!("delete{gv}Collection{scope}{kind}"),
            action: "deletecollection",
            description: format!("delete collection of {kind}"),
            params: DELETE_COLLECTION_PARAMS,
            body: Some((DELETE_OPTIONS.to_owned(), ANY_CONTENT_TYPE)),
            responses: vec![("200", "OK", STATUS.to_owned())],
            produces: OBJECT_MEDIA_TYPES,
        });
    }

    let mut item_ops = Vec::new();
    if has("get") {
        item_ops.push(Operation {
            method: "get",
            id: format!("read{gv}{scope}{kind}"),
            action: "get",
            description: format!("read the specified {kind}"),
            params: &[],
            body: None,
            responses: vec![("200", "OK", definition.clone())],
            produces: OBJECT_MEDIA_TYPES,
        });
    }
    if has("update") {
        item_ops.push(Operation {
            method: "put",
            id: format!("replace{gv}{scope}{kind}"),
            action: "put",
            description: format!("replace the specified {kind}"),
            params: WRITE_PARAMS,
            body: Some((definition.clone(), ANY_CONTENT_TYPE)),
            responses: vec![
                ("200", "OK", definition.clone()),
                ("201", "Created", definition.clone()),
            ],
            produces: OBJECT_MEDIA_TYPES,
        });
    }
    if has("delete") {
        item_ops.push(Operation {
            method: "delete",
            id: format!("delete{gv}{scope}{kind}"),
            action: "delete",
            description: format!("delete a {kind}"),
            params: DELETE_PARAMS,
            body: Some((DELETE_OPTIONS.to_owned(), ANY_CONTENT_TYPE)),
            responses: vec![
                ("200", "OK", STATUS.to_owned()),
                ("202", "Accepted", STATUS.to_owned()),
            ],
            produces: OBJECT_MEDIA_TYPES,
        });
    }
    if has("patch") {
        item_ops.push(Operation {
            method: "patch",
            id: format!("patch{gv}{scope}{kind}"),
            action: "patch",
            description: format!("partially update the specified {kind}"),
            params: PATCH_PARAMS,
            body: Some((PATCH.to_owned(), PATCH_CONTENT_TYPES)),
            responses: vec![
                ("200", "OK", definition.clone()),
                ("201", "Created", definition.clone()),
            ],
            produces: OBJECT_MEDIA_TYPES,
        });
    }

    let item_path = format!("{collection}/{{name}}");
    let mut items = Vec::new();
    if !collection_ops.is_empty() {
        items.push(PathItem {
            path: collection,
            params: scope_params(false),
            operations: collection_ops,
            gvk: gvk.clone(),
            tag: tag.clone(),
        });
    }
    if !item_ops.is_empty() {
        items.push(PathItem {
            path: item_path,
            params: scope_params(true),
            operations: item_ops,
            gvk: gvk.clone(),
            tag: tag.clone(),
        });
    }
    if resource.namespaced && has("list") {
        items.push(PathItem {
            path: format!("{base}/{}", resource.resource),
            params: vec![&PRETTY],
            operations: vec![Operation {
                method: "get",
                id: format!("list{gv}{kind}ForAllNamespaces"),
                action: "list",
                description: format!("list or watch objects of kind {kind}"),
                params: LIST_PARAMS,
                body: None,
                responses: vec![("200", "OK", list_definition.to_owned())],
                produces: LIST_MEDIA_TYPES,
            }],
            gvk,
            tag,
        });
    }
    items
}

/// Definitions the operations of `items` refer to.
pub(crate) fn referenced_definitions(items: &[PathItem]) -> impl Iterator<Item = &str> {
    items.iter().flat_map(|item| {
        item.operations.iter().flat_map(|op| {
            op.body
                .iter()
                .map(|(definition, _)| definition.as_str())
                .chain(op.responses.iter().map(|(_, _, d)| d.as_str()))
        })
    })
}

impl PathItem {
    pub(crate) fn render(&self, flavor: Flavor) -> Value {
        let mut item = Map::new();
        for op in &self.operations {
            item.insert(op.method.into(), self.render_operation(op, flavor));
        }
        item.insert(
            "parameters".into(),
            Value::Array(
                self.params
                    .iter()
                    .map(|p| render_param(p, flavor))
                    .collect(),
            ),
        );
        Value::Object(item)
    }

    fn render_operation(&self, op: &Operation, flavor: Flavor) -> Value {
        let mut out = Map::new();
        out.insert("tags".into(), Value::Array(vec![self.tag.clone().into()]));
        out.insert("description".into(), op.description.clone().into());
        out.insert("operationId".into(), op.id.clone().into());
        let mut params: Vec<Value> = op.params.iter().map(|p| render_param(p, flavor)).collect();
        match flavor {
            Flavor::V2 => {
                let consumes = op.body.as_ref().map_or(ANY_CONTENT_TYPE, |(_, c)| *c);
                out.insert("consumes".into(), strings(consumes));
                out.insert("produces".into(), strings(op.produces));
                out.insert("schemes".into(), strings(&["https"]));
                if let Some((definition, _)) = &op.body {
                    let mut body = Map::new();
                    body.insert("in".into(), "body".into());
                    body.insert("name".into(), "body".into());
                    body.insert("required".into(), true.into());
                    body.insert("schema".into(), flavor.reference(definition));
                    params.insert(0, Value::Object(body));
                }
            }
            Flavor::V3 => {
                if let Some((definition, content_types)) = &op.body {
                    let mut body = Map::new();
                    body.insert(
                        "content".into(),
                        media_content(content_types, flavor.reference(definition)),
                    );
                    body.insert("required".into(), true.into());
                    out.insert("requestBody".into(), Value::Object(body));
                }
            }
        }
        if !params.is_empty() {
            out.insert("parameters".into(), Value::Array(params));
        }
        let mut responses = Map::new();
        for (code, description, definition) in &op.responses {
            let mut response = Map::new();
            response.insert("description".into(), (*description).into());
            match flavor {
                Flavor::V2 => {
                    response.insert("schema".into(), flavor.reference(definition));
                }
                Flavor::V3 => {
                    response.insert(
                        "content".into(),
                        media_content(op.produces, flavor.reference(definition)),
                    );
                }
            }
            responses.insert((*code).into(), Value::Object(response));
        }
        let mut unauthorized = Map::new();
        unauthorized.insert("description".into(), "Unauthorized".into());
        responses.insert("401".into(), Value::Object(unauthorized));
        out.insert("responses".into(), Value::Object(responses));
        out.insert("x-kubernetes-action".into(), op.action.into());
        out.insert("x-kubernetes-group-version-kind".into(), self.gvk.to_json());
        Value::Object(out)
    }
}

fn media_content(types: &[&str], schema: Value) -> Value {
    let mut content = Map::new();
    for media_type in types {
        let mut entry = Map::new();
        entry.insert("schema".into(), schema.clone());
        content.insert((*media_type).into(), Value::Object(entry));
    }
    Value::Object(content)
}

fn strings(values: &[&str]) -> Value {
    Value::Array(values.iter().map(|v| Value::String((*v).into())).collect())
}

fn render_param(param: &Param, flavor: Flavor) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), param.name.into());
    out.insert(
        "in".into(),
        match param.location {
            Location::Path => "path",
            Location::Query => "query",
        }
        .into(),
    );
    out.insert("description".into(), param.description.into());
    if matches!(param.location, Location::Path) {
        out.insert("required".into(), true.into());
    }
    match flavor {
        Flavor::V2 => {
            out.insert("type".into(), param.ty.into());
            out.insert("uniqueItems".into(), true.into());
        }
        Flavor::V3 => {
            let mut schema = Map::new();
            schema.insert("type".into(), param.ty.into());
            schema.insert("uniqueItems".into(), true.into());
            out.insert("schema".into(), Value::Object(schema));
        }
    }
    Value::Object(out)
}
