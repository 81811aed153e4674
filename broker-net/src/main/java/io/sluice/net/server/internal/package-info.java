/**
 * The binary port's own machinery: the per-connection {@code RequestHandler} (a {@code PipelinedConnection} that
 * decodes the binary protocol's header), one class per long-running request ({@code ProduceBatchOperation},
 * {@code FetchOperation}), the API dispatch ({@code Requests}) and the counters. Not API.
 */
package io.sluice.net.server.internal;
