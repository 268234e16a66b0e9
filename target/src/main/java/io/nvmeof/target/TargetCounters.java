package io.nvmeof.target;

import java.util.concurrent.atomic.LongAdder;

/** What the target counts since its start, for the metrics: events, not state. */
final class TargetCounters {
    final LongAdder keepAliveExpiries = new LongAdder();
    final LongAdder connectionsRefused = new LongAdder();
    final LongAdder pendingDisplaced = new LongAdder();
}
