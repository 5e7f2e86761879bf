//! Socket reads and writes for the hot path as bare system calls. A multi-threaded
//! process's `recv` and `send` in glibc are cancellation points: each call switches
//! asynchronous cancellation on and off around the system call (two atomic updates of the
//! thread's state), which on a pipeline-1 load is a measurable part of the client's own
//! CPU. kvbench never cancels a thread, so the worker calls the kernel through
//! `syscall(2)`, which is no cancellation point, with the flags std would use.

use std::io;
use std::os::fd::RawFd;

/// `recv(fd, buf, 0)`: bytes read, 0 at the end of the stream.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the call's duration;
    // recvfrom with null address arguments only writes into it.
    let n = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd,
            buf.as_mut_ptr(),
            buf.len(),
            0,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    };
    result(n)
}

/// `send(fd, buf, MSG_NOSIGNAL)`: bytes written. A closed peer is an error, never SIGPIPE.
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the call's duration;
    // sendto with a null address only reads from it.
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd,
            buf.as_ptr(),
            buf.len(),
            libc::MSG_NOSIGNAL,
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::socklen_t,
        )
    };
    result(n)
}

fn result(n: libc::c_long) -> io::Result<usize> {
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
