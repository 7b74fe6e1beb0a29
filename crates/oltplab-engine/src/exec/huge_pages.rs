//! The run's heap moved onto huge pages once its connections are open (Linux's
//! `MADV_COLLAPSE`), so that touching a connection's state costs fewer TLB misses.
//!
//! Why: with thousands of connections each runs an event only every few seconds, so every
//! statement finds its state cold (a script's coroutine, environment and statement objects; a
//! native connection's buffers, workload state and future), spread over tens to hundreds of MB
//! of heap in 4 KiB pages, allocated interleaved with the other connections' as they connected.
//! On a virtual machine each TLB miss is a two-level page walk: at 4,096 script connections
//! collapsing the heap into 2 MiB pages cut the client's user-space CPU per read-only
//! transaction by ~15 % (docs/lua.md, "What it costs"; native connections: docs/performance.md).
//! A run allocates almost nothing once connected, so the heap stays where it was put.

/// Only mappings at least this resident are collapsed: a collapsed range becomes resident in
/// full, and a sparse one (a thread's stack, a malloc arena's unused tail) would cost RSS.
const MIN_RESIDENT_PERCENT: u64 = 90;
const HUGE_PAGE_BYTES: usize = 2 << 20;
/// `MADV_COLLAPSE` (Linux 6.1): synchronous, whatever the system's THP mode short of `never`.
/// (Elsewhere there is no /proc/self/smaps, so it is never asked for.)
const MADV_COLLAPSE: libc::c_int = 25;

/// Collapses the process's dense anonymous mappings into huge pages; a kernel without
/// `MADV_COLLAPSE` or with THP disabled refuses, which changes nothing. Returns the bytes
/// collapsed.
pub fn collapse_heap() -> usize {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return 0 };
    dense_anonymous(&smaps).into_iter().filter_map(|(start, end)| collapse(start, end)).sum()
}

/// The huge-page-aligned parts of the private read-write anonymous mappings (and `[heap]`)
/// resident for at least `MIN_RESIDENT_PERCENT` of their size.
fn dense_anonymous(smaps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some((a, b)) = first.split_once('-') {
            let (perms, path) = (fields.next().unwrap_or_default(), fields.nth(3));
            let range = usize::from_str_radix(a, 16).ok().zip(usize::from_str_radix(b, 16).ok());
            let anonymous = path.is_none() || path == Some("[heap]");
            current = range.filter(|_| perms.starts_with("rw") && perms.ends_with('p') && anonymous);
        } else if first == "Rss:" {
            let rss_kb: u64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            if let Some((start, end)) = current.take() {
                let size_kb = ((end - start) / 1024) as u64;
                let start = start.next_multiple_of(HUGE_PAGE_BYTES);
                let end = end / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
                if end > start && rss_kb * 100 >= size_kb * MIN_RESIDENT_PERCENT {
                    out.push((start, end));
                }
            }
        }
    }
    out
}

#[allow(unsafe_code)]
fn collapse(start: usize, end: usize) -> Option<usize> {
    // SAFETY: advice on a mapping of this process, which keeps its contents and protection;
    // only the page size backing it changes.
    let r = unsafe { libc::madvise(start as *mut libc::c_void, end - start, MADV_COLLAPSE) };
    (r == 0).then_some(end - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
00400000-00600000 r-xp 00000000 08:01 42 /usr/bin/python3
Rss:                2048 kB
7f0000000000-7f0000800000 rw-p 00000000 00:00 0 
Rss:                8000 kB
7f0000800000-7f0001000000 rw-p 00000000 00:00 0 
Rss:                 100 kB
7f0001000000-7f0001400000 rw-s 00000000 00:01 7 /dev/shm/x
Rss:                4096 kB
01000000-01300000 rw-p 00000000 00:00 0 [heap]
Rss:                3072 kB
7ffc00000000-7ffc00800000 rw-p 00000000 00:00 0 [stack]
Rss:                8192 kB
";

    #[test]
    fn only_dense_private_anonymous_mappings_whole_huge_pages() {
        // The arena (dense), the [heap] (aligned down to its one whole huge page); not the
        // executable, the sparse mapping, the shared one or the stack.
        assert_eq!(dense_anonymous(SMAPS), vec![(0x7f00_0000_0000, 0x7f00_0080_0000), (0x0100_0000, 0x0120_0000)]);
    }

    #[test]
    fn collapsing_keeps_the_contents() {
        let data: Vec<u64> = (0..(8 << 20) / 8).collect();
        let collapsed = collapse_heap();
        assert!(data.iter().enumerate().all(|(i, &v)| v == i as u64));
        if collapsed > 0 {
            // What the kernel says it did, it did: huge pages back part of the process.
            let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap();
            let huge_kb: u64 = rollup
                .lines()
                .find_map(|l| l.strip_prefix("AnonHugePages:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap();
            assert!(huge_kb >= 2048, "{collapsed} bytes collapsed, {huge_kb} kB on huge pages");
        }
    }
}
