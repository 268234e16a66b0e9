package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.nvmeof.fabric.tls.TlsPskHandler;
import io.nvmeof.protocol.tls.PskIdentity;
import io.nvmeof.protocol.tls.TlsPsk;

/**
 * The first byte a host sends on a port with TLS: a TLS handshake record (22) puts the secure
 * channel in front of the PDU reader; anything else is NVMe/TCP in the clear, which a port that
 * requires TLS refuses (the connection ends, with a log line naming the peer), as nvmet does.
 */
final class TlsDetector extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(TlsDetector.class.getName());
    private static final int HANDSHAKE_RECORD = 22;
    private final Target target;
    private final boolean required;

    TlsDetector(Target target, boolean required) {
        this.target = target;
        this.required = required;
    }

    /** The configured PSK of the host an identity names (one per host, for every subsystem it may reach). */
    static TlsPsk configured(Target target, PskIdentity id) {
        HostSecurity h = target.hostSecurity(id.hostNqn());
        return h == null ? null : h.tlsKey();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf b) || !b.isReadable()) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (b.getUnsignedByte(b.readerIndex()) == HANDSHAKE_RECORD) {
            ctx.pipeline().addAfter(ctx.name(), "tls", TlsPskHandler.server(id -> configured(target, id)));
        } else if (required) {
            LOG.log(System.Logger.Level.WARNING, "refused a connection from {0}: the port requires TLS, and the host"
                    + " speaks NVMe/TCP in the clear (first byte {1})", ctx.channel().remoteAddress(),
                    b.getUnsignedByte(b.readerIndex()));
            b.release();
            ctx.close();
            return;
        }
        ctx.pipeline().remove(this);
        ctx.fireChannelRead(b);
    }
}
