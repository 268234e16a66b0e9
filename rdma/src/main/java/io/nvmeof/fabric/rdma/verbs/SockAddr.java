package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** struct sockaddr_in / sockaddr_in6 in native memory (family in host order, port and address in network order). */
final class SockAddr {
    private SockAddr() {
    }

    /** Writes {@code address} as a sockaddr into a fresh 128-byte native block (sockaddr_storage); free it with {@link Native#free}. */
    static long allocate(InetSocketAddress address) throws IOException {
        InetAddress ip = address.getAddress();
        if (ip == null) {
            throw new UnknownHostException("cannot resolve " + address.getHostString());
        }
        long sa = Native.calloc(128);
        int port = address.getPort();
        if (ip instanceof Inet4Address) {
            MEM.putShort(sa, (short) Abi.AF_INET);
            putPort(sa + 2, port);
            MEM.putByteArray(sa + 4, ip.getAddress(), 0, 4);
        } else {
            MEM.putShort(sa, (short) Abi.AF_INET6);
            putPort(sa + 2, port);
            MEM.putByteArray(sa + 8, ip.getAddress(), 0, 16);
            MEM.putInt(sa + 24, ((Inet6Address) ip).getScopeId());
        }
        return sa;
    }

    private static void putPort(long at, int port) {
        MEM.putByte(at, (byte) (port >>> 8));
        MEM.putByte(at + 1, (byte) port);
    }

    /** Reads the sockaddr at {@code sa}; null for a family other than IPv4/IPv6 (e.g. an unbound id). */
    static InetSocketAddress read(long sa) {
        int family = MEM.getShort(sa) & 0xffff;
        int port = ((MEM.getByte(sa + 2) & 0xff) << 8) | (MEM.getByte(sa + 3) & 0xff);
        try {
            if (family == Abi.AF_INET) {
                return new InetSocketAddress(InetAddress.getByAddress(Native.bytes(sa + 4, 4)), port);
            }
            if (family == Abi.AF_INET6) {
                byte[] a = Native.bytes(sa + 8, 16);
                int scope = MEM.getInt(sa + 24);
                return new InetSocketAddress(Inet6Address.getByAddress(null, a, scope), port);
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);    // only for a wrong address length
        }
        return null;
    }
}
