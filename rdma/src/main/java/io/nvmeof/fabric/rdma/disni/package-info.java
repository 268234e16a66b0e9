/**
 * The {@code disni} RDMA provider: a thin adapter from IBM DiSNI 2.1's Java verbs API ({@code
 * com.ibm.disni.verbs}) to the verbs SPI of {@link io.nvmeof.fabric.rdma}.
 *
 * <h2>What the {@code disni} provider cannot do</h2>
 *
 * <p>DiSNI 2.1 runs on real RNICs (InfiniBand, RoCE, iWARP) and on the kernel's soft-RoCE, but
 * its Java API hides parts of rdma_cm that NVMe/RDMA uses. The {@code verbs} provider (rdma-core
 * through jnr-ffi) has none of these limits; prefer it where it runs.
 *
 * <ul>
 *   <li><b>No incoming private data.</b> DiSNI copies only the event type and the ids of a CM
 *       event to Java, so a connect request's private data is not visible
 *       ({@code ConnectRequest.privateData()} is null). A DiSNI target cannot validate the
 *       NVMe/RDMA CM request (recfmt, qid, hrqsize, hsqsize): it must assume them and learns the
 *       queue from the Fabrics Connect command that follows (QID, SQSIZE). On the connecting
 *       side the accept's private data is not visible either.</li>
 *   <li><b>No accept private data.</b> {@code rdma_accept} is called without private data, so
 *       the host gets no NVMe/RDMA CM accept (recfmt, crqsize). The Linux host ({@code
 *       nvme-rdma}) does not read the accept's private data (on ESTABLISHED it only posts its
 *       receives) and works. SPDK hosts read crqsize from it: current SPDK only logs it but fails
 *       the connection when there is no private data at all (possible on iWARP; on IB/RoCE the
 *       accept message always carries a private-data area, which then reads as zeros); older SPDK
 *       releases take {@code min(queue depth, crqsize)} and would end up with a queue depth of 0.
 *       Accept private data passed to {@code accept} is dropped (logged once).</li>
 *   <li><b>No reject.</b> DiSNI has no {@code rdma_reject}: {@code ConnectRequest.reject} destroys
 *       the request's CM id and logs that DiSNI cannot send a reject. The host sees a reject
 *       without the NVMe/RDMA reject status (or its connect times out), not the status that says
 *       why.</li>
 *   <li><b>No IRD/ORD control.</b> DiSNI's native connect and accept set {@code
 *       responder_resources} and {@code initiator_depth} to the device's {@code max_qp_rd_atom}
 *       and its setters throw "Operation currently not supported": {@code ConnectParams}' depths
 *       are not sent, and the requester's responder resources are not visible. An accepting side
 *       therefore assumes it may have 1 RDMA READ outstanding toward the host
 *       ({@code ConnectRequest.initiatorDepth()}; the target's {@code disni_initiator_depth} setting
 *       raises it where every host is known to accept N). Flow control cannot be set either.</li>
 *   <li><b>A rejected connect may never return.</b> DiSNI's endpoint API waits for ever on a
 *       rejected connect; this provider drives the CM events itself and fails the connect with
 *       {@code RdmaRejectedException} (without private data or reason) on REJECTED, and in any
 *       case bounds the whole connect by {@code ConnectParams.timeoutMillis()}: expiry means
 *       "rejected or unreachable".</li>
 *   <li><b>IPv4 only</b> (DiSNI's socket address is a {@code sockaddr_in}).</li>
 *   <li><b>SEND with Invalidate builds its work request per post</b> (DiSNI cannot change the
 *       invalidate key of a prepared post); every other post reuses prepared DiSNI calls and
 *       allocates nothing.</li>
 *   <li><b>Java 17 needs {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED}</b> at run time:
 *       DiSNI reads buffer addresses through {@code sun.nio.ch.DirectBuffer}. Without it, or
 *       without {@code libdisni} (built from DiSNI 2.1's sources against rdma-core's librdmacm
 *       and libibverbs, on {@code LD_LIBRARY_PATH} or {@code -Djava.library.path}), {@link
 *       io.nvmeof.fabric.rdma.disni.DisniProvider#open} fails at once with one message that says
 *       what to do.</li>
 * </ul>
 *
 * <p>Threads: a daemon CM thread ({@code disni-cm}) makes every connection-management call; each
 * completion queue (shared by the connections of a device, {@code disni_cq_size}
 * entries, 16384 by default) has a daemon thread that hands completions to the connection's
 * event loop. DiSNI's own logging (slf4j) goes to slf4j-nop.
 */
package io.nvmeof.fabric.rdma.disni;
