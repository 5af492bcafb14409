//! Searching ascending lists for rising wants: each search goes on from
//! where the last one ended, by steps doubling from there, so walking one
//! list against another costs what the shorter one holds, not a full
//! binary search of the longer one per element.

/// Whether ascending `list` holds `wanted`, searched from `*from` on (no
/// earlier element can be wanted: the wants only rise); `*from` moves to
/// where the search ended.
pub fn holds_from<T: Ord>(list: &[T], from: &mut usize, wanted: &T) -> bool {
    holds_key_from(list, from, wanted, |element| element)
}

/// As [`holds_from`], for a list ascending by `key` of its elements.
pub fn holds_key_from<T, K: Ord + ?Sized>(
    list: &[T],
    from: &mut usize,
    wanted: &K,
    key: impl Fn(&T) -> &K,
) -> bool {
    let rest = list.get(*from..).unwrap_or_default();
    let mut bound = 1;
    while bound < rest.len() && key(&rest[bound]) < wanted {
        bound *= 2;
    }
    let low = bound / 2;
    let end = bound.min(rest.len());
    *from += low
        + rest
            .get(low..end)
            .map_or(0, |r| r.partition_point(|o| key(o) < wanted));
    list.get(*from).is_some_and(|found| key(found) == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Searching on from where the last search ended finds what a
        /// binary search of the whole list finds, for rising wants.
        #[test]
        fn a_search_from_the_last_one_finds_what_a_binary_search_finds(
            mut list in proptest::collection::vec((0u32..40, 0u32..8), 0..200),
            mut wanted in proptest::collection::vec((0u32..42, 0u32..9), 0..60),
        ) {
            list.sort_unstable();
            list.dedup();
            wanted.sort_unstable();
            let mut from = 0;
            for want in wanted {
                proptest::prop_assert_eq!(
                    holds_from(&list, &mut from, &want),
                    list.binary_search(&want).is_ok()
                );
            }
        }
    }
}
