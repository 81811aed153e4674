package io.sluice.bench.report;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SampleTest {
    @Test
    void medianOfAnOddCountIsTheMiddleValueAndTheSpreadIsMinToMax() {
        Sample s = Sample.of(5, 1, 3);
        assertThat(s.median()).isEqualTo(3);
        assertThat(s.min()).isEqualTo(1);
        assertThat(s.max()).isEqualTo(5);
        assertThat(s.describe()).isEqualTo("3.00 [1.00–5.00]");
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheTwoMiddleValues() {
        assertThat(Sample.of(4, 1, 2, 3).median()).isEqualTo(2.5);
    }

    @Test
    void anEmptySampleIsRefused() {
        assertThatThrownBy(Sample::of).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRowLosesToTheReferenceOnlyWhenItsMedianIsWorseInTheRowsDirection() {
        Row latency = new Row("P99", "µs", Better.LOWER, Sample.of(10, 12, 30), null, 11.0, null);
        Row throughput = new Row("rate", "msg/s", Better.HIGHER, Sample.of(10, 12, 30), null, 11.0, null);
        assertThat(latency.losesToReference()).isTrue();
        assertThat(latency.verdict()).startsWith("LOSES");
        assertThat(throughput.losesToReference()).isFalse();
        assertThat(throughput.verdict()).startsWith("beats");
        assertThat(new Row("x", "u", Better.LOWER, null, null, 1.0, null).losesToReference()).isFalse();
        Row paced = new Row("rate", "msg/s", Better.HIGHER, Sample.of(5_023), null, 5_026.0, null);
        assertThat(paced.losesToReference()).isFalse();
        assertThat(paced.verdict()).isEqualTo("ties (±1%)");
    }

    @Test
    void aRowThatMeasuresAnotherQuantityThanTheReferenceNeitherBeatsNorLoses() {
        Row otherQuantity = new Row("P99", "µs", Better.LOWER, Sample.of(1, 2, 3), null, 100.0, null).notComparable("journaled");
        assertThat(otherQuantity.verdict()).isEqualTo("not comparable: journaled");
        assertThat(otherQuantity.referenceVerdict()).isEqualTo(Verdict.NOT_COMPARABLE);
        Row worse = new Row("P99", "µs", Better.LOWER, Sample.of(300), null, 100.0, null).notComparable("journaled");
        assertThat(worse.losesToReference()).isFalse();
        assertThat(worse.worseThanIncomparableReference()).isTrue();
    }
}
