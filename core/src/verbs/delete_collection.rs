//! deletecollection: every object a list selects, deleted one by one.

use super::api_core::*;
use super::delete::gc_finalizer_for;

impl ApiCore {
    pub async fn delete_collection(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        list: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<ObjectList> {
        let namespace = self.scope(def, namespace)?;
        self.authorize(user, "deletecollection", def, namespace, None, View::Main)
            .await?;
        // Checked once up front, as upstream does, even when nothing matches.
        gc_finalizer_for(opts)?;
        let listed = self.list_authorized(def, namespace, list).await?;
        let mut deleted = Vec::new();
        for item in listed.items {
            let ns = object::namespace(&item).to_string();
            let ns = (!ns.is_empty()).then_some(ns.as_str());
            match self
                .delete_authorized(def, ns, object::name(&item), opts)
                .await
            {
                Ok(done) => deleted.push(served_shared(def, done.object)?.into()),
                // Someone else deleted it meanwhile: the goal is met.
                Err(e) if e.code() == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(ObjectList {
            items: deleted,
            resource_version: listed.resource_version,
            continue_token: None,
            remaining_item_count: None,
        })
    }
}
