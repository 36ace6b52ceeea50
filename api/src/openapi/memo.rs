//! Per-thread memos of what is derived from the built-in schemas, keyed by
//! the schemas' addresses.
//!
//! Every write walks the same built-in OpenAPI schemas (its unknown-field
//! check, its managedFields), and deriving what a walk needs from a
//! schema's JSON reads up to ten of its keys each time. The built-in
//! definitions are `'static` and never change, so a schema's address
//! identifies it for the life of the process. A schema that can be freed
//! (a CustomResourceDefinition's) must not be keyed here: another schema
//! could take its address.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::thread::LocalKey;

/// A memo's table. foldhash: the keys are addresses, not attacker-chosen,
/// and SipHash cost more than the lookup saved.
pub(crate) type Memo<K, V> = RefCell<HashMap<K, V, foldhash::fast::FixedState>>;

/// The address that identifies a built-in schema, or a `'static` name.
pub(crate) fn address<T: ?Sized>(schema: &'static T) -> usize {
    std::ptr::from_ref(schema).cast::<()>() as usize
}

/// `memo`'s value for `key`, derived by `derive` the first time on this
/// thread.
pub(crate) fn get_or_derive<K: Eq + Hash, V: Clone>(
    memo: &'static LocalKey<Memo<K, V>>,
    key: K,
    derive: impl FnOnce() -> V,
) -> V {
    if let Some(value) = memo.with_borrow(|values| values.get(&key).cloned()) {
        return value;
    }
    let value = derive();
    memo.with_borrow_mut(|values| values.insert(key, value.clone()));
    value
}
