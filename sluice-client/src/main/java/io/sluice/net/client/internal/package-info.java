/**
 * Client machinery: the pipelined connection, the producer's batching sender and buffer-memory bound, the key
 * partitioner. Not API.
 */
package io.sluice.net.client.internal;
