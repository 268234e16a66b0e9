package io.nvmeof.daemon.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** JSON-RPC 2.0 responses and error codes (the spec's, and ours from -32000 down). */
public final class Rpc {
    public static final int PARSE_ERROR = -32700;
    public static final int INVALID_REQUEST = -32600;
    public static final int METHOD_NOT_FOUND = -32601;
    public static final int INVALID_PARAMS = -32602;
    /** The change could not be made (a backend that cannot open, a port that cannot listen, the state not kept). */
    public static final int FAILED = -32000;
    public static final int NOT_AUTHORIZED = -32001;
    public static final int SERVER_BUSY = -32002;

    static final ObjectMapper JSON = new ObjectMapper();

    private Rpc() {
    }

    public static ObjectNode result(JsonNode id, JsonNode result) {
        ObjectNode r = JSON.createObjectNode();
        r.put("jsonrpc", "2.0");
        r.set("result", result);
        r.set("id", id);
        return r;
    }

    /** An error; {@code field} (may be null) names the parameter or configuration field at fault. */
    public static ObjectNode error(JsonNode id, int code, String message, String field) {
        ObjectNode r = JSON.createObjectNode();
        r.put("jsonrpc", "2.0");
        ObjectNode e = r.putObject("error");
        e.put("code", code);
        e.put("message", message);
        if (field != null) {
            e.putObject("data").put("field", field);
        }
        r.set("id", id);
        return r;
    }
}
