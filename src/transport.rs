//! One connection's byte stream: plain TCP or a Unix socket behind one read/write interface.

use std::io::{self, Read, Write};
use std::net::Shutdown;

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};

use crate::config::{Config, Endpoint};

/// A non-blocking stream registered with a worker's `mio::Poll`.
pub enum Transport {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Transport {
    /// Starts a non-blocking connect; completion is seen on the first writable event
    /// and checked with [`Transport::finish_connect`].
    pub fn connect(endpoint: &Endpoint, _config: &Config) -> io::Result<Transport> {
        match endpoint {
            Endpoint::Tcp { addr, .. } => {
                let stream = TcpStream::connect(*addr)?;
                Ok(Transport::Tcp(stream))
            }
            Endpoint::Unix(path) => Ok(Transport::Unix(UnixStream::connect(path)?)),
        }
    }

    /// After a writable or error event while connecting: `Ok(true)` once connected,
    /// `Ok(false)` if the connect is still in progress, `Err` if it failed.
    pub fn finish_connect(&mut self) -> io::Result<bool> {
        match self {
            Transport::Tcp(stream) => {
                if let Some(err) = stream.take_error()? {
                    return Err(err);
                }
                match stream.peer_addr() {
                    Ok(_) => {
                        // Requests are small and latency-bound; Nagle would add delay.
                        stream.set_nodelay(true)?;
                        Ok(true)
                    }
                    Err(err)
                        if err.kind() == io::ErrorKind::NotConnected
                            || err.raw_os_error() == Some(libc::EINPROGRESS) =>
                    {
                        Ok(false)
                    }
                    Err(err) => Err(err),
                }
            }
            Transport::Unix(stream) => {
                if let Some(err) = stream.take_error()? {
                    return Err(err);
                }
                Ok(true)
            }
        }
    }

    /// Registers the stream edge-triggered for both directions, once for its lifetime.
    pub fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        self.source()
            .register(registry, token, Interest::READABLE | Interest::WRITABLE)
    }

    pub fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        self.source().deregister(registry)
    }

    /// Closes both directions; errors are irrelevant since the stream is being dropped.
    pub fn shutdown(&self) {
        let _ = match self {
            Transport::Tcp(stream) => stream.shutdown(Shutdown::Both),
            Transport::Unix(stream) => stream.shutdown(Shutdown::Both),
        };
    }

    fn source(&mut self) -> &mut dyn Source {
        match self {
            Transport::Tcp(stream) => stream,
            Transport::Unix(stream) => stream,
        }
    }

    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(stream) => stream.read(buf),
            Transport::Unix(stream) => stream.read(buf),
        }
    }

    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(stream) => stream.write(buf),
            Transport::Unix(stream) => stream.write(buf),
        }
    }
}
