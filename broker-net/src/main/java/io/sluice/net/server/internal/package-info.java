/**
 * Server machinery: the per-connection {@code RequestHandler} (ordered responses, back-pressure), one class per
 * long-running request ({@code ProduceBatchOperation}, {@code FetchOperation}), the API dispatch ({@code Requests}), the
 * connection limit and the counters. Not API.
 */
package io.sluice.net.server.internal;
