//! A process tree's CPU time and memory, from /proc (servers such as Granian do their work in
//! forked children, so the server's cost is the whole tree's).

use std::collections::HashMap;

struct Stat {
    state: char,
    ppid: u32,
    group: u32,
    user_ticks: u64,
    system_ticks: u64,
}

fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ") ".
    let fields: Vec<&str> = text.rsplit_once(") ")?.1.split_whitespace().collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        group: fields.get(2)?.parse().ok()?,
        user_ticks: fields.get(11)?.parse().ok()?,
        system_ticks: fields.get(12)?.parse().ok()?,
    })
}

fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc").into_iter().flatten().flatten().filter_map(|entry| entry.file_name().to_str().and_then(|n| n.parse().ok()))
}

/// How many processes of process group `group` are running (zombies, which only wait to be
/// reaped, not counted).
pub fn group_members(group: u32) -> usize {
    pids().filter_map(stat).filter(|s| s.group == group && s.state != 'Z').count()
}

/// `root` and every process descended from it.
pub fn tree(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for pid in pids() {
        if let Some(s) = stat(pid) {
            children.entry(s.ppid).or_default().push(pid);
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get(&out[i]) {
            out.extend(kids);
        }
        i += 1;
    }
    out
}

/// utime + stime of the tree (all threads), in clock ticks.
pub fn tree_cpu_ticks(root: u32) -> u64 {
    let (user, system) = tree_cpu_ticks_split(root);
    user + system
}

/// The tree's utime and stime (all threads), in clock ticks: its own work, and the kernel's on
/// its behalf (sockets, wakes, scheduling).
pub fn tree_cpu_ticks_split(root: u32) -> (u64, u64) {
    tree(root).into_iter().filter_map(stat).fold((0, 0), |(user, system), s| (user + s.user_ticks, system + s.system_ticks))
}

pub fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
}

pub fn tree_rss_kb(root: u32) -> u64 {
    tree(root).into_iter().filter_map(rss_kb).sum()
}

pub fn clock_ticks_per_sec() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_includes_children_and_their_cpu() {
        // A child that burns CPU: the tree's ticks must include its ticks, which must grow.
        let mut child = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let me = std::process::id();
        assert!(tree(me).contains(&child.id()));
        assert!(tree_rss_kb(me) >= rss_kb(me).unwrap());
        let started = std::time::Instant::now();
        let mut child_ticks = 0;
        while child_ticks < 20 && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            child_ticks = stat(child.id()).map(|s| s.user_ticks + s.system_ticks).unwrap();
        }
        let own = stat(me).map(|s| s.user_ticks + s.system_ticks).unwrap();
        let whole = tree_cpu_ticks(me);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(child_ticks >= 20, "the busy child ran {child_ticks} ticks in 20 s");
        assert!(whole >= own + child_ticks, "tree {whole} < own {own} + child {child_ticks}");
    }

    #[test]
    fn the_kernels_share_is_the_system_time() {
        // A child that only makes system calls (one-byte reads and writes): its time is the
        // kernel's, and the tree's system ticks must include it.
        let mut child = std::process::Command::new("dd").args(["if=/dev/zero", "of=/dev/null", "bs=1"]).stderr(std::process::Stdio::null()).spawn().unwrap();
        let started = std::time::Instant::now();
        let mut child_system = 0;
        while child_system < 20 && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            child_system = stat(child.id()).unwrap().system_ticks;
        }
        let (_, tree_system) = tree_cpu_ticks_split(std::process::id());
        let child_user = stat(child.id()).unwrap().user_ticks;
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(child_system >= 20, "the child spent {child_system} ticks in the kernel in 20 s");
        assert!(child_system > child_user, "one-byte copies are the kernel's work: system {child_system}, user {child_user}");
        assert!(tree_system >= child_system, "tree's system ticks {tree_system} < the child's {child_system}");
    }
}

/// Open file descriptors of the tree (sockets, pipes, files).
pub fn tree_fds(root: u32) -> u64 {
    tree(root).into_iter().filter_map(|pid| std::fs::read_dir(format!("/proc/{pid}/fd")).ok()).map(|d| d.count() as u64).sum()
}
