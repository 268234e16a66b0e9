/**
 * A small verbs interface for the NVMe/RDMA binding, in the shape of rdma_cm + libibverbs:
 * a {@link io.nvmeof.fabric.rdma.RdmaProvider} listens or connects (with CM private data), a
 * {@link io.nvmeof.fabric.rdma.RdmaConnection} is one reliable-connected queue pair that posts
 * receives, SENDs (optionally with invalidate), one-sided RDMA READs and WRITEs against
 * {@link io.nvmeof.fabric.rdma.MemoryRegion}s of its {@link io.nvmeof.fabric.rdma.ProtectionDomain},
 * and delivers work completions to an {@link io.nvmeof.fabric.rdma.RdmaHandler} on the
 * connection's event loop.
 *
 * <p>Providers: {@code verbs} (rdma-core through jnr-ffi), {@code disni} (IBM DiSNI 2.1) and
 * {@code soft} (RC semantics in software over TCP). {@link io.nvmeof.fabric.rdma.RdmaProviders}
 * picks one by name. Every provider's connection is an {@link
 * io.nvmeof.fabric.rdma.AbstractRdmaConnection}, which owns the one lifecycle ({@link
 * io.nvmeof.fabric.rdma.ConnectionState}), the work request tables and the delivery of
 * completions; a provider brings the connection up and supplies post, poll, disconnect and
 * destroy.
 */
package io.nvmeof.fabric.rdma;
