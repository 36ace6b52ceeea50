//! Column descriptions, from the API field docs (the swagger docs upstream reads them from).

pub(super) const D_NAME: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
pub(crate) const D_CONTAINERS: &str = "Names of each container in the template.";
pub(crate) const D_IMAGES: &str = "Images referenced by each container in the template.";
pub(super) const D_CREATED: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
pub(crate) const D_JOB_SELECTOR: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
pub(super) const D_EV_LAST: &str =
    "The time at which the most recent occurrence of this event was recorded.";
pub(super) const D_EV_TYPE: &str =
    "Type of this event (Normal, Warning), new types could be added in the future";
pub(super) const D_EV_REASON: &str = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.";
pub(super) const D_EV_OBJECT: &str = "The object that this event is about.";
pub(super) const D_EV_SOURCE: &str =
    "The component reporting this event. Should be a short machine understandable string.";
pub(super) const D_EV_MESSAGE: &str =
    "A human-readable description of the status of this operation.";
pub(super) const D_EV_FIRST: &str =
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)";
pub(super) const D_EV_COUNT: &str = "The number of times this event has occurred.";
pub(super) const D_OBJREF_FIELD_PATH: &str = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.";
