/**
 * The connection machinery every Sluice port with length-framed requests shares (the binary port and the Kafka
 * listener): {@code FramedListener} (accept and I/O threads, the per-connection pipeline, the connection bound, the
 * draining close), {@code PipelinedConnection} (ordered responses, back-pressure, the pre-authentication bounds, the
 * slow-drip and idle checks) and {@code ConnectionCounters}. A port supplies only how it decodes and starts a request.
 * For Sluice's own ports, not an application API.
 */
package io.sluice.net.server.pipeline;
