package io.nvmeof.daemon.metrics;

import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.target.BufferBudget;
import io.nvmeof.target.Controller;
import io.nvmeof.target.GatewayGroup;
import io.nvmeof.target.IoStats;
import io.nvmeof.target.LatencyHistogram;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Qos;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.Map;

/**
 * The target's own metrics, read from its counters at each scrape: per namespace commands,
 * bytes, failures by status and latency histograms; per subsystem failures; per controller
 * its host, connections and commands in flight; and the target's connections, keep-alive
 * expiries and command-buffer budget. Nothing here runs on the data path: the data path only
 * bumps adders ({@link IoStats}), and this reads them.
 */
public final class TargetMetrics implements MultiCollector {
    private static final double[] BOUNDS = LatencyHistogram.upperBoundsSeconds();
    private final Target target;

    public TargetMetrics(Target target) {
        this.target = target;
    }

    @Override
    public MetricSnapshots collect() {
        CounterSnapshot.Builder commands = counter("nvmeof_namespace_commands",
                "I/O commands completed, by namespace and kind (read, write, flush, other), whatever their status");
        CounterSnapshot.Builder bytes = counter("nvmeof_namespace_bytes",
                "Bytes read and written by successful commands, by namespace").unit(Unit.BYTES);
        CounterSnapshot.Builder nsErrors = counter("nvmeof_namespace_errors",
                "I/O commands that failed, by namespace and NVMe status (SCT/SC in hex)");
        HistogramSnapshot.Builder latency = HistogramSnapshot.builder().name("nvmeof_namespace_latency_seconds")
                .help("Time from a command's arrival to its completion, by namespace and kind").unit(Unit.SECONDS);
        GaugeSnapshot.Builder size = GaugeSnapshot.builder().name("nvmeof_namespace_size_bytes")
                .help("Namespace capacity").unit(Unit.BYTES);
        CounterSnapshot.Builder subErrors = counter("nvmeof_subsystem_errors",
                "Commands (admin and I/O) that failed on the subsystem's controllers, by NVMe status (SCT/SC in hex)");
        GaugeSnapshot.Builder queues = gauge("nvmeof_controller_connections",
                "Queues (one connection each) of a controller, admin queue included");
        GaugeSnapshot.Builder inFlight = gauge("nvmeof_controller_commands_in_flight",
                "Commands a controller's host has outstanding, over all its queues (queue depth in use)");
        GaugeSnapshot.Builder controllers = gauge("nvmeof_subsystem_controllers", "Controllers (host associations)");
        CounterSnapshot.Builder nsThrottled = counter("nvmeof_namespace_qos_throttled_seconds",
                "Time I/O commands waited for the namespace's QoS limits, summed over the commands").unit(Unit.SECONDS);
        CounterSnapshot.Builder hostThrottled = counter("nvmeof_host_qos_throttled_seconds",
                "Time I/O commands waited for the host's QoS limits, summed over the commands").unit(Unit.SECONDS);
        CounterSnapshot.Builder nsOverruns = counter("nvmeof_namespace_qos_overruns",
                "I/O commands let over the namespace's QoS limits because they would have waited longer than 5 s");
        CounterSnapshot.Builder hostOverruns = counter("nvmeof_host_qos_overruns",
                "I/O commands let over the host's QoS limits because they would have waited longer than 5 s");
        for (Subsystem s : target.subsystems()) {
            for (Namespace ns : s.namespaces().values()) {
                String nsid = Integer.toUnsignedString(ns.nsid());
                IoStats st = ns.stats();
                for (IoStats.Op op : IoStats.Op.values()) {
                    // a kind that never ran has no series but its count, and that for reads and writes
                    // alone (thousands of idle namespaces would be megabytes of zeros)
                    long n = st.commands(op);
                    Labels l = Labels.of("subsystem", s.nqn(), "nsid", nsid, "op", op.label);
                    if (n > 0 || op == IoStats.Op.READ || op == IoStats.Op.WRITE) {
                        commands.dataPoint(counterPoint(n, l));
                    }
                    if (n == 0) {
                        continue;
                    }
                    if (op == IoStats.Op.READ || op == IoStats.Op.WRITE || op == IoStats.Op.COPY) {
                        bytes.dataPoint(counterPoint(st.bytes(op), l));
                    }
                    LatencyHistogram h = st.latency(op);
                    latency.dataPoint(HistogramDataPointSnapshot.builder()
                            .classicHistogramBuckets(ClassicHistogramBuckets.of(BOUNDS, h.counts()))
                            .sum(h.sumSeconds()).labels(l).build());
                }
                errors(nsErrors, st.errorsByStatus(), Labels.of("subsystem", s.nqn(), "nsid", nsid));
                Qos q = ns.qos();
                if (q != null) {
                    Labels l = Labels.of("subsystem", s.nqn(), "nsid", nsid);
                    nsThrottled.dataPoint(CounterDataPointSnapshot.builder().value(q.throttledNanos() / 1e9).labels(l).build());
                    nsOverruns.dataPoint(counterPoint(q.overruns(), l));
                }
                size.dataPoint(GaugeDataPointSnapshot.builder().value(ns.backend().size())
                        .labels(Labels.of("subsystem", s.nqn(), "nsid", nsid)).build());
            }
            errors(subErrors, s.errorsByStatus(), Labels.of("subsystem", s.nqn()));
            controllerPoints(s, queues, inFlight, controllers);
        }
        controllerPoints(target.discovery(), queues, inFlight, controllers);
        BufferBudget budget = target.bufferBudget();
        long pooled = EventLoops.ALLOCATOR instanceof ByteBufAllocatorMetricProvider p ? p.metric().usedDirectMemory() : 0;
        target.hostQosAll().forEach((host, q) -> {
            hostThrottled.dataPoint(CounterDataPointSnapshot.builder()
                    .value(q.throttledNanos() / 1e9).labels(Labels.of("host", host)).build());
            hostOverruns.dataPoint(counterPoint(q.overruns(), Labels.of("host", host)));
        });
        GatewayGroup gateways = target.gatewayGroup();
        Labels group = gateways == null ? Labels.EMPTY : Labels.of("group", gateways.config().name());
        return MetricSnapshots.of(commands.build(), bytes.build(), nsErrors.build(), latency.build(), size.build(),
                counter("nvmeof_gateway_lease_changes", "ANA group leases this gateway took, lost or let go (gateway"
                        + " group)").dataPoint(counterPoint(gateways == null ? 0 : gateways.leaseChanges(), group)).build(),
                counter("nvmeof_gateway_fencings", "Gateways this one fenced (blocklisted) before taking their ANA groups")
                        .dataPoint(counterPoint(gateways == null ? 0 : gateways.fencings(), group)).build(),
                counter("nvmeof_gateway_fenced", "Times the cluster fenced this gateway (it re-opened with a new client)")
                        .dataPoint(counterPoint(gateways == null ? 0 : gateways.timesFenced(), group)).build(),
                nsThrottled.build(), hostThrottled.build(), nsOverruns.build(), hostOverruns.build(),
                subErrors.build(), queues.build(), inFlight.build(), controllers.build(),
                single(gauge("nvmeof_connections", "Connections open now, over all ports"), target.connectionCount()),
                counter("nvmeof_connections_refused", "Connections refused because the target's connection limit was reached")
                        .dataPoint(counterPoint(target.connectionsRefused(), Labels.EMPTY)).build(),
                single(gauge("nvmeof_discovery_connections", "Discovery controllers connected now"),
                        target.discoveryConnectionCount()),
                counter("nvmeof_connections_displaced", "Connections not yet connected closed to make room for newer ones"
                        + " from their address").dataPoint(counterPoint(target.pendingDisplaced(), Labels.EMPTY)).build(),
                counter("nvmeof_keep_alive_expiries",
                        "Controllers torn down because their host sent nothing within the keep-alive timeout")
                        .dataPoint(counterPoint(target.keepAliveExpiries(), Labels.EMPTY)).build(),
                single(gauge("nvmeof_buffer_budget_used_bytes", "Bytes of command data buffers held by commands now")
                        .unit(Unit.BYTES), budget.used()),
                single(gauge("nvmeof_buffer_budget_limit_bytes", "The most bytes of command data buffers commands may hold")
                        .unit(Unit.BYTES), budget.limit()),
                single(gauge("nvmeof_buffer_budget_waiting", "Commands waiting for a data buffer now"), budget.waiting()),
                counter("nvmeof_buffer_budget_waits", "Commands that have had to wait for a data buffer")
                        .dataPoint(counterPoint(budget.waits(), Labels.EMPTY)).build(),
                single(gauge("nvmeof_pooled_direct_memory_bytes", "Direct memory held by the target's buffer pool (Netty)")
                        .unit(Unit.BYTES), pooled));
    }

    private static void controllerPoints(Subsystem s, GaugeSnapshot.Builder queues, GaugeSnapshot.Builder inFlight,
                                         GaugeSnapshot.Builder controllers) {
        int n = 0;
        for (Controller c : s.controllers()) {
            int connections = c.queueCount();
            int outstanding = c.commandsInFlight();
            Labels l = Labels.of("subsystem", s.nqn(), "cntlid", Integer.toString(c.cntlid()), "host", c.hostNqn());
            queues.dataPoint(GaugeDataPointSnapshot.builder().value(connections).labels(l).build());
            inFlight.dataPoint(GaugeDataPointSnapshot.builder().value(outstanding).labels(l).build());
            n++;
        }
        controllers.dataPoint(GaugeDataPointSnapshot.builder().value(n).labels(Labels.of("subsystem", s.nqn())).build());
    }

    private static void errors(CounterSnapshot.Builder b, Map<String, Long> errors, Labels base) {
        for (Map.Entry<String, Long> e : errors.entrySet()) {
            b.dataPoint(counterPoint(e.getValue(), base.add("status", e.getKey())));
        }
    }

    private static CounterSnapshot.Builder counter(String name, String help) {
        return CounterSnapshot.builder().name(name).help(help);
    }

    private static GaugeSnapshot.Builder gauge(String name, String help) {
        return GaugeSnapshot.builder().name(name).help(help);
    }

    private static CounterDataPointSnapshot counterPoint(double value, Labels labels) {
        return CounterDataPointSnapshot.builder().value(value).labels(labels).build();
    }

    private static GaugeSnapshot single(GaugeSnapshot.Builder b, double value) {
        return b.dataPoint(GaugeDataPointSnapshot.builder().value(value).labels(Labels.EMPTY).build()).build();
    }
}
