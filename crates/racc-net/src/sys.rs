//! Thin, checked wrappers over the Linux system calls the runtime needs and std does not wrap.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `Err(last OS error)` when a libc call returned -1.
pub fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Ask for timer wake-ups within `ns` of their deadline (the default slack is 50 µs) for the
/// calling thread: the runtime's timers need tens of microseconds, not milliseconds.
pub fn set_timer_slack(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long; failure only leaves the default.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// Move the calling thread into the network namespace `name` (created by `ip netns add`).
pub fn enter_netns(name: &str) -> io::Result<()> {
    let f = std::fs::File::open(format!("/var/run/netns/{name}"))?;
    // SAFETY: a valid namespace fd; CLONE_NEWNET switches only this thread's network namespace.
    cvt(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

pub fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let fl = cvt(libc::fcntl(fd.as_raw_fd(), libc::F_GETFL))?;
        cvt(libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK))?;
    }
    Ok(())
}

/// Wait until one of `fds` is readable or `timeout_ns` passed (nanosecond resolution, unlike
/// poll's milliseconds). Returns how many are ready; an interrupted wait returns 0.
pub fn ppoll(fds: &mut [libc::pollfd], timeout_ns: u64) -> io::Result<usize> {
    let ts = timespec_ns(timeout_ns);
    // SAFETY: `fds` is a valid slice of pollfd; a null sigmask keeps the thread's own.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    ready_count(r as i64)
}

/// A wait's timeout in nanoseconds as the kernel's timespec.
fn timespec_ns(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// A wait call's result: how many fds are ready; a wait interrupted by a signal counts as none.
fn ready_count(r: i64) -> io::Result<usize> {
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

pub fn pollfd(fd: libc::c_int) -> libc::pollfd {
    libc::pollfd { fd, events: libc::POLLIN, revents: 0 }
}

/// The wall clock (CLOCK_REALTIME), ns since the epoch: what the kernel's receive timestamps
/// (SO_TIMESTAMPNS) read.
pub fn realtime_ns() -> i128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128
}

/// This thread's CPU time, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How long the calling thread has waited on a run queue, runnable but not running, ns (the
/// second field of `/proc/thread-self/schedstat`); 0 where unreadable. For a SCHED_FIFO thread
/// alone on its CPU this is the kernel's RT throttling (and the rare higher-priority kernel
/// thread).
pub fn thread_run_delay_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// Wrap a raw fd returned by a successful call.
pub fn owned(fd: libc::c_int) -> OwnedFd {
    // SAFETY: callers pass an fd they just obtained and own.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Whether process `pid` exists (a run's namespaces whose process is gone are stale).
pub fn pid_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Run the calling thread under SCHED_FIFO at `prio`, so that a busy machine (compilers on both
/// cores) does not delay the emulation's wake-ups by milliseconds. The runtime's threads sleep
/// in `ppoll` whenever nothing is due, so they take no more CPU than their packets need.
/// Returns false (and changes nothing) where the kernel refuses.
pub fn set_realtime(prio: i32) -> bool {
    let p = libc::sched_param { sched_priority: prio };
    // SAFETY: pid 0 is the calling thread; a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// An epoll instance: the devices are registered once, and each wait returns only those ready
/// (unlike `ppoll`, which queues the thread on every fd's wait queue at every call).
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 has no pointer arguments.
        Ok(Epoll { fd: owned(cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?) })
    }

    /// Watch `fd` for input (level-triggered), reported with `token`.
    pub fn add(&self, fd: libc::c_int, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
        // SAFETY: a valid epoll fd, a valid fd and event.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Wait until a watched fd is readable or `timeout_ns` passed (0: only look), with
    /// nanosecond resolution (`epoll_pwait2`, Linux 5.11). Returns the events filled in; an
    /// interrupted wait returns none.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ns: u64) -> io::Result<usize> {
        let ts = timespec_ns(timeout_ns);
        // SAFETY: epoll_pwait2(epfd, events, maxevents, timeout, sigmask = NULL, sigsetsize);
        // `events` is a valid buffer of the length given.
        let r = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.fd.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                8usize,
            )
        };
        ready_count(r as i64)
    }
}

/// Keep the calling thread off CPU `cpu` (on every other CPU it may use); false where that
/// leaves none or the kernel refuses.
pub fn avoid_cpu(cpu: usize) -> bool {
    // SAFETY: sched_getaffinity fills a valid cpu_set_t; CPU_CLR/CPU_COUNT stay within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return false;
        }
        if cpu < libc::CPU_SETSIZE as usize {
            libc::CPU_CLR(cpu, &mut set);
        }
        libc::CPU_COUNT(&set) > 0 && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// The CPUs this process may run on.
pub fn cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills a valid cpu_set_t; CPU_ISSET stays within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Let the calling thread run on `cpus` (false where the kernel refuses).
pub fn set_affinity(cpus: &[usize]) -> bool {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET stays within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Sleep `ns` nanoseconds (CLOCK_MONOTONIC; an interrupted sleep returns early).
pub fn sleep_ns(ns: u64) {
    let ts =
        libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long };
    // SAFETY: a valid timespec; no remainder wanted.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}

/// Have the kernel send SIGTERM to this process when its parent dies (`PR_SET_PDEATHSIG`;
/// the handler then tears the run down), and check that the parent is still `parent`: it may
/// have died before the request took effect. Returns false if it has.
pub fn die_with_parent(parent: u32) -> bool {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; getppid has no preconditions.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0);
        libc::getppid() as u32 == parent
    }
}
