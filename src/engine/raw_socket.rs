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

/// Bytes received on `fd` and not read yet (`FIONREAD`); 0 when it cannot say.
pub fn unread(fd: RawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which is valid for the call.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n as *mut libc::c_int) };
    if rc == 0 { n.max(0) as usize } else { 0 }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    #[test]
    fn bytes_go_both_ways_and_the_end_of_the_stream_reads_zero() {
        let (client, mut server) = pair();
        assert_eq!(send(client.as_raw_fd(), b"PING\r\n").unwrap(), 6);
        let mut got = [0u8; 6];
        server.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"PING\r\n");
        server.write_all(b"+PONG\r\n").unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(recv(client.as_raw_fd(), &mut buf).unwrap(), 7);
        assert_eq!(&buf[..7], b"+PONG\r\n");
        server.shutdown(Shutdown::Write).unwrap();
        assert_eq!(recv(client.as_raw_fd(), &mut buf).unwrap(), 0);
    }

    #[test]
    fn a_nonblocking_socket_with_nothing_says_would_block() {
        let (client, _server) = pair();
        client.set_nonblocking(true).unwrap();
        let err = recv(client.as_raw_fd(), &mut [0u8; 16]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn writing_to_a_closed_peer_is_an_error_not_a_signal() {
        let (client, server) = pair();
        drop(server);
        // The first write may be accepted before the reset comes back; keep writing
        // until the kernel reports the broken connection, as the error kinds the
        // connection's failure message expects. (Whether SIGPIPE is raised cannot show
        // here: Rust's runtime ignores it in every Rust program.)
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match send(client.as_raw_fd(), b"SET k v\r\n") {
                Ok(_) => assert!(std::time::Instant::now() < deadline, "no error in 10 s"),
                Err(err) => {
                    assert!(
                        matches!(
                            err.kind(),
                            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                        ),
                        "{err}"
                    );
                    break;
                }
            }
        }
    }
}
