//! Where a passthrough tunnel may go. Interception exists to emulate the services; a tunnel to
//! anything else is a door into whatever the sandbox's host can reach, so by default it reaches
//! only public addresses: never loopback, private (RFC 1918, unique-local), link-local, shared
//! (RFC 6598), unspecified, multicast or broadcast addresses, nor the sandbox's own listeners —
//! unless the operator allows a range (`--passthrough-allow CIDR`). The host is resolved once
//! and the tunnel dials the very address that was checked, so a name that resolves anew (DNS
//! rebinding) cannot slip past.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::IpNet;

/// The passthrough's rule.
#[derive(Debug, Clone, Default)]
pub(crate) struct Egress {
    /// Ranges allowed although internal.
    pub(crate) allow: Vec<IpNet>,
    /// The sandbox's own listeners: never a tunnel's end, whatever is allowed.
    pub(crate) own: Vec<SocketAddr>,
}

/// Why a tunnel may not go to an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// An internal address not allowed by `--passthrough-allow`.
    #[error(
        "{0} is an internal address (loopback, private, link-local or the like); passthrough reaches it only when --passthrough-allow names its range"
    )]
    Internal(IpAddr),
    /// One of the sandbox's own listeners.
    #[error("{0} is this sandbox's own listener")]
    Own(SocketAddr),
}

impl Egress {
    /// Whether a tunnel may be carried to `to`.
    pub(crate) fn check(&self, to: SocketAddr) -> Result<(), Refused> {
        let ip = canonical(to.ip());
        if self
            .own
            .iter()
            .any(|o| o.port() == to.port() && (canonical(o.ip()) == ip || o.ip().is_unspecified()))
        {
            return Err(Refused::Own(to));
        }
        if internal(ip) && !self.allow.iter().any(|net| net.contains(&ip)) {
            return Err(Refused::Internal(ip));
        }
        Ok(())
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether `ip` is no public host's address.
fn internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => internal_v6(v6),
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0
        // Shared address space (RFC 6598), a carrier's or a cloud's inside.
        || (a == 100 && (64..128).contains(&b))
        // Reserved for future use (240/4).
        || a >= 240
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Unique-local (fc00::/7) and link-local (fe80::/10).
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        // IPv4-compatible and NAT64 forms of an internal IPv4 address.
        || ip.to_ipv4().is_some_and(internal_v4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn internal_addresses_are_refused_public_ones_carried() {
        let e = Egress::default();
        for a in [
            "127.0.0.1:6379",
            "10.1.2.3:443",
            "172.16.0.1:443",
            "192.168.1.1:80",
            "169.254.169.254:80",
            "100.64.0.1:443",
            "0.0.0.0:443",
            "[::1]:443",
            "[fd00::1]:443",
            "[fe80::1]:443",
            "[::ffff:127.0.0.1]:6379",
        ] {
            assert!(e.check(at(a)).is_err(), "{a}");
        }
        for a in ["93.184.216.34:443", "[2606:4700::1111]:443"] {
            assert_eq!(e.check(at(a)), Ok(()), "{a}");
        }
    }

    #[test]
    fn an_allowed_range_opens_only_itself_and_never_the_sandbox() {
        let e = Egress {
            allow: vec!["127.0.0.0/8".parse().unwrap()],
            own: vec![at("127.0.0.1:8080"), at("0.0.0.0:8443")],
        };
        assert_eq!(e.check(at("127.0.0.1:6379")), Ok(()));
        assert!(matches!(
            e.check(at("10.0.0.1:443")),
            Err(Refused::Internal(_))
        ));
        assert!(matches!(
            e.check(at("127.0.0.1:8080")),
            Err(Refused::Own(_))
        ));
        assert!(matches!(
            e.check(at("127.0.0.5:8443")),
            Err(Refused::Own(_))
        ));
    }
}
