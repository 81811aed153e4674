/** Sluice benchmarks. */
package io.sluice.bench;
