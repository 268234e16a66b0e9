package io.nvmeof.fabric.rdma.disni;

/** {@code rdma_cm_event_type} numbers, as DiSNI's {@code RdmaCmEvent.getEvent()} returns them. */
final class CmEvents {
    static final int ADDR_RESOLVED = 0;
    static final int ADDR_ERROR = 1;
    static final int ROUTE_RESOLVED = 2;
    static final int ROUTE_ERROR = 3;
    static final int CONNECT_REQUEST = 4;
    static final int CONNECT_RESPONSE = 5;
    static final int CONNECT_ERROR = 6;
    static final int UNREACHABLE = 7;
    static final int REJECTED = 8;
    static final int ESTABLISHED = 9;
    static final int DISCONNECTED = 10;
    static final int DEVICE_REMOVAL = 11;
    static final int MULTICAST_JOIN = 12;
    static final int MULTICAST_ERROR = 13;
    static final int ADDR_CHANGE = 14;
    static final int TIMEWAIT_EXIT = 15;

    private static final String[] NAMES = {"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR",
        "CONNECT_REQUEST", "CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED",
        "DISCONNECTED", "DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT"};

    private CmEvents() {
    }

    static String name(int event) {
        return event >= 0 && event < NAMES.length ? "RDMA_CM_EVENT_" + NAMES[event] : "RDMA CM event " + event;
    }

    /** Whether {@code event} ends a connect attempt (active side) or a connection that is not established yet. */
    static boolean isConnectFailure(int event) {
        return event == ADDR_ERROR || event == ROUTE_ERROR || event == CONNECT_ERROR || event == UNREACHABLE
                || event == REJECTED || event == DEVICE_REMOVAL;
    }
}
