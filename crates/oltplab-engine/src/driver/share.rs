//! One copy, for all of a run's connections, of what each would otherwise hold the same of: at
//! 4,096 connections a statement's metadata read from the connection's own copy was a cache miss
//! at every execution (4,095 other connections ran since), where one copy for all stays in the
//! cache (docs/performance-engine.md, "Profile at 4,096 connections").

use std::sync::{Arc, Mutex, PoisonError, Weak};

/// How many distinct values [`share_equal`] remembers: a run's connections prepare one list, but a
/// few of them may differ (a MySQL connection on a cached server thread continues its statement
/// ids), and those must not make the others' copy be forgotten.
const REMEMBERED: usize = 8;

/// `value`, or an equal one that an earlier call with the same `recent` returned, while a
/// connection still holds it. The [`REMEMBERED`] latest are kept; a value nobody holds any more
/// is freed.
pub fn share_equal<T: PartialEq>(recent: &Mutex<Vec<Weak<T>>>, value: T) -> Arc<T> {
    let mut recent = recent.lock().unwrap_or_else(PoisonError::into_inner);
    recent.retain(|w| w.strong_count() > 0);
    if let Some(same) = recent.iter().filter_map(Weak::upgrade).find(|v| **v == value) {
        return same;
    }
    let fresh = Arc::new(value);
    if recent.len() == REMEMBERED {
        recent.remove(0);
    }
    recent.push(Arc::downgrade(&fresh));
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_copy_while_it_is_held() {
        static RECENT: Mutex<Vec<Weak<Vec<u32>>>> = Mutex::new(Vec::new());
        let a = share_equal(&RECENT, vec![1, 2]);
        let b = share_equal(&RECENT, vec![1, 2]);
        assert!(Arc::ptr_eq(&a, &b));
        // A few others in between do not make it forgotten.
        let others: Vec<_> = (0..REMEMBERED as u32 - 1).map(|i| share_equal(&RECENT, vec![i + 10])).collect();
        assert!(Arc::ptr_eq(&a, &share_equal(&RECENT, vec![1, 2])));
        assert!(!Arc::ptr_eq(&others[0], &a) && *others[0] == [10]);
        // One more, and the oldest goes.
        let more = share_equal(&RECENT, vec![99]);
        assert!(!Arc::ptr_eq(&a, &share_equal(&RECENT, vec![1, 2])));
        drop((a, b, others, more));
        let fresh = share_equal(&RECENT, vec![5]);
        assert_eq!(RECENT.lock().unwrap().len(), 1, "the values nobody holds are gone");
        drop(fresh);
    }
}
