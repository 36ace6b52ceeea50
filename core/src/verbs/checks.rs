//! The checks every write makes: decoding against the kind's schema and validation.

use super::api_core::*;

impl ApiCore {
    /// Upstream's validation of a new object (`old` None) or an update;
    /// kinds stored at another version are validated in their stored form,
    /// the one upstream's (internal-version) rules are written against,
    /// unless they validate each version against its own schema.
    /// A write through `/status` answers only for metadata and status, as
    /// upstream's ValidateXxxStatusUpdate: the rest is the stored object's,
    /// which a rule added since must not make unwritable.
    pub(super) fn validate(
        &self,
        def: &ResourceDef,
        object: &Value,
        old: Option<&Value>,
        name: &str,
        view: View,
    ) -> ApiResult<()> {
        let kind = &def.kind_impl;
        let mut errs = object_meta::object_meta(object, kind.name_rule(), def.namespaced);
        errs.extend(crate::validate::meta::finalizers(
            object,
            kind.standard_finalizers_only(),
        ));
        let converted;
        let (object, old) = if def.converts_for_storage() && !kind.validates_served_form() {
            converted = (
                storage_form(def, object)?,
                old.map(|o| storage_form(def, o)).transpose()?,
            );
            (&*converted.0, converted.1.as_deref())
        } else {
            (object, old)
        };
        errs.extend(match (old, view.subresource()) {
            (None, _) => kind.validate_create(object),
            (Some(old), Some(sub)) => kind
                .validate_subresource_update(sub, object, old)
                .unwrap_or_else(|| kind.validate_update(object, old)),
            (Some(old), None) => kind.validate_update(object, old),
        });
        if view == View::Status {
            errs.retain(|e| {
                let top = e.field.split(['.', '[']).next().unwrap_or_default();
                top == "status" || top == "metadata"
            });
            if let Some(old) = old {
                errs.extend(kind.validate_status_update(object, old));
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(&def.group, &def.kind, name, errs))
        }
    }

    /// Decodes `object` against the kind's schema, as upstream decodes a
    /// body into its Go type: a mistyped value fails the write with the
    /// error upstream gives where the object came from; fields the schema
    /// lacks are dropped and handled per the request's fieldValidation.
    pub(super) fn check_fields(
        &self,
        def: &ResourceDef,
        object: &mut Value,
        opts: &WriteOptions,
        source: BodySource<'_>,
    ) -> ApiResult<Vec<String>> {
        let unknown = match def.kind_impl.decode(&def.definition, object) {
            Ok(unknown) => unknown,
            Err(mismatch) => {
                return Err(source.type_error((&def.kind, &def.version), object, &mismatch))
            }
        };
        let mut unknown: Vec<String> = unknown
            .into_iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect();
        unknown.extend(
            opts.duplicate_fields
                .iter()
                .map(|f| format!("duplicate field \"{f}\"")),
        );
        match opts.field_validation {
            FieldValidation::Strict if !unknown.is_empty() => {
                Err(source.strict_error((&def.kind, &def.version), object, &unknown.join(", ")))
            }
            FieldValidation::Ignore => Ok(Vec::new()),
            _ => Ok(unknown),
        }
    }
}
