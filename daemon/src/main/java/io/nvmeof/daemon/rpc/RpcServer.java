package io.nvmeof.daemon.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * JSON-RPC 2.0 over a Unix domain socket: one request per line, one response per line, as
 * many as the caller sends on one connection. The socket is made mode 0660, so the target's
 * user and group reach it (and root); each caller is then identified by {@code SO_PEERCRED}
 * and served only if {@link Management#authorize} admits its user or group, which is asked again
 * at each request (a reload that takes a caller's rights away takes them from its open
 * connection too). Each request must arrive whole within {@link #REQUEST_MILLIS} of the connection
 * or of the answer before it; at most {@link #MAX_CALLERS} admitted callers are served at once (root
 * always is, beyond them), a line is at most 1 MiB. A caller refused is answered apart, at most
 * {@link #MAX_REFUSED} at once, so refused or idle callers cannot lock out those admitted.
 */
public final class RpcServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RpcServer.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    static final int MAX_CALLERS = 16;
    static final int MAX_REFUSED = 16;
    static final int MAX_LINE = 1 << 20;
    static final long REQUEST_MILLIS = 10_000;

    private final Path path;
    private final ServerSocketChannel server;
    private final Management methods;
    private final Semaphore callers = new Semaphore(MAX_CALLERS);
    private final Semaphore refused = new Semaphore(MAX_REFUSED);
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer;
    private final Thread acceptor;

    private RpcServer(Path path, ServerSocketChannel server, Management methods) {
        this.path = path;
        this.server = server;
        this.methods = methods;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemonThread(r, "nvmeof-rpc-timer"));
        this.acceptor = daemonThread(this::acceptLoop, "nvmeof-rpc");
    }

    /**
     * Listens on {@code path} (a stale socket file there is replaced; one another process
     * serves is an error).
     */
    public static RpcServer start(Path path, Management methods) throws IOException {
        Files.createDirectories(path.toAbsolutePath().getParent());
        if (Files.exists(path)) {
            if (served(path)) {
                throw new IOException("management socket " + path + " is served by another process");
            }
            Files.delete(path); // left by a process that is gone
        }
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(path));
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-rw----"));
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot serve the management API on " + path + ": " + e.getMessage(), e);
        }
        RpcServer s = new RpcServer(path, server, methods);
        s.acceptor.start();
        return s;
    }

    public Path path() {
        return path;
    }

    /** Whether a process accepts connections on the socket file {@code path}. */
    private static boolean served(Path path) {
        try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(path))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "management API: accept failed: {0}", e.getMessage());
                continue;
            }
            Caller caller;
            try {
                UnixDomainPrincipal p = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
                caller = new Caller(p.user().getName(), p.group().getName());
            } catch (IOException | UnsupportedOperationException e) {
                LOG.log(System.Logger.Level.WARNING, "management API: cannot identify a caller ({0}); refused", e.getMessage());
                closeQuietly(ch);
                continue;
            }
            String refusal = methods.authorize(caller);
            // who is refused waits in a pool of its own; root is always served
            Semaphore slots = refusal != null ? refused : caller.user().equals("root") ? null : callers;
            if (slots != null && !slots.tryAcquire()) {
                reply(ch, Rpc.error(null, Rpc.SERVER_BUSY, refusal != null ? refusal : "busy: " + MAX_CALLERS
                        + " callers are being served", null));
                closeQuietly(ch);
                continue;
            }
            if (refusal != null) {
                LOG.log(System.Logger.Level.WARNING, "management API: refused {0}: {1}", caller, refusal);
            }
            open.add(ch);
            daemonThread(() -> {
                try {
                    serve(ch, caller);
                } finally {
                    open.remove(ch);
                    closeQuietly(ch);
                    if (slots != null) {
                        slots.release();
                    }
                }
            }, "nvmeof-rpc-caller").start();
        }
    }

    private void serve(SocketChannel ch, Caller caller) {
        ByteBuffer in = ByteBuffer.allocate(64 << 10);
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        // the whole of each request within REQUEST_MILLIS: a byte now and then does not keep a slot
        ScheduledFuture<?>[] deadline = {timer.schedule(() -> closeQuietly(ch), REQUEST_MILLIS, TimeUnit.MILLISECONDS)};
        try {
            serveLines(ch, caller, in, line, deadline);
        } finally {
            deadline[0].cancel(false);
        }
    }

    private void serveLines(SocketChannel ch, Caller caller, ByteBuffer in, ByteArrayOutputStream line,
                            ScheduledFuture<?>[] deadline) {
        while (ch.isOpen()) {
            int n;
            try {
                in.clear();
                n = ch.read(in);
            } catch (IOException e) {
                return;
            }
            if (n < 0) {
                return;
            }
            in.flip();
            while (in.hasRemaining()) {
                byte b = in.get();
                if (b != '\n') {
                    line.write(b);
                    if (line.size() > MAX_LINE) {
                        reply(ch, Rpc.error(null, Rpc.INVALID_REQUEST, "a request longer than " + MAX_LINE + " bytes", null));
                        return;
                    }
                    continue;
                }
                String text = line.toString(StandardCharsets.UTF_8).trim();
                line.reset();
                deadline[0].cancel(false); // a call may take long; the next request's time starts at its answer
                String refusal = methods.authorize(caller);
                if (refusal != null) {
                    // answered after the request is read, so the caller is not writing into a closed
                    // socket when the answer comes; nothing of the request is looked at
                    reply(ch, Rpc.error(null, Rpc.NOT_AUTHORIZED, refusal, null));
                    return;
                }
                if (!text.isEmpty()) {
                    ObjectNode answer = call(text, caller);
                    // the answer too must be taken within the deadline: a caller that never reads keeps no slot
                    ScheduledFuture<?> write = timer.schedule(() -> closeQuietly(ch), REQUEST_MILLIS, TimeUnit.MILLISECONDS);
                    boolean sent = reply(ch, answer);
                    write.cancel(false);
                    if (!sent) {
                        return;
                    }
                }
                deadline[0] = timer.schedule(() -> closeQuietly(ch), REQUEST_MILLIS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** The response to one request line. */
    private ObjectNode call(String text, Caller caller) {
        JsonNode req;
        try {
            req = JSON.readTree(text);
        } catch (IOException e) {
            return Rpc.error(null, Rpc.PARSE_ERROR, "not JSON: " + e.getMessage().lines().findFirst().orElse(""), null);
        }
        JsonNode id = req == null ? null : req.get("id");
        if (req == null || !req.isObject() || !"2.0".equals(req.path("jsonrpc").asText())
                || !req.path("method").isTextual()) {
            return Rpc.error(id, Rpc.INVALID_REQUEST, "a request is {\"jsonrpc\": \"2.0\", \"method\": NAME,"
                    + " \"params\": {...}, \"id\": ID}", null);
        }
        JsonNode params = req.get("params");
        if (params != null && !params.isObject() && !params.isNull()) {
            return Rpc.error(id, Rpc.INVALID_PARAMS, "params must be an object", "params");
        }
        return methods.call(req.get("method").asText(), params == null || params.isNull() ? JSON.createObjectNode()
                : (ObjectNode) params, id, caller);
    }

    private static boolean reply(SocketChannel ch, ObjectNode response) {
        try {
            ByteBuffer b = ByteBuffer.wrap((JSON.writeValueAsString(response) + "\n").getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) {
                ch.write(b);
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    private static Thread daemonThread(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (SocketChannel ch : open) {
            closeQuietly(ch);
        }
        timer.shutdownNow();
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(path);
    }

    /** Who called, as {@code SO_PEERCRED} says: the user and group of the calling process. */
    public record Caller(String user, String group) {
        @Override
        public String toString() {
            return "user " + user + " (group " + group + ")";
        }
    }
}
