/** Sluice ingest-pipeline: ClickHouse sinks. */
package io.sluice.ingest;
