package io.sluice.core.internal.bus;

import io.sluice.core.Acks;
import io.sluice.core.SendCallback;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RingSlot}'s callback hand-off: a slot's callback is taken once per fill, by whichever thread completes the
 * event (the journal writer, or a closing ring for what it could not journal). A one-event slot keeps the reference
 * after it ran, so that the next fill with the same callback stores no reference (a garbage-collector card per
 * journaled event otherwise); a batch slot, whose callback is a network request's own, lets go of it once it ran.
 */
class RingSlotTest {
    private static final byte[] VALUE = "v".getBytes(StandardCharsets.UTF_8);

    private static void fill(RingSlot slot, SendCallback callback) {
        slot.fill("t", 0, null, VALUE, List.of(), 1L, callback == null ? Acks.MEMORY : Acks.JOURNAL, callback);
    }

    @Test
    void aFilledCallbackIsTakenOncePerFill() {
        SendCallback callback = (partition, offset, error) -> { };
        RingSlot slot = new RingSlot();
        fill(slot, callback);
        assertThat(slot.takeCallback()).isSameAs(callback);
        assertThat(slot.takeCallback()).as("taken already: it runs once").isNull();

        fill(slot, callback);
        assertThat(slot.takeCallback()).as("filled again with the same callback: due again").isSameAs(callback);
        assertThat(slot.takeCallback()).isNull();
    }

    @Test
    void aOneEventSlotKeepsItsCallbackAfterItRanSoTheNextFillStoresNoReference() {
        SendCallback callback = (partition, offset, error) -> { };
        RingSlot slot = new RingSlot();
        fill(slot, callback);
        slot.takeCallback();
        assertThat(slot.callback).as("kept: the next fill with it finds it there").isSameAs(callback);
    }

    @Test
    void aSlotFilledWithoutACallbackOrCancelledHasNoneToTake() {
        SendCallback callback = (partition, offset, error) -> { };
        RingSlot slot = new RingSlot();
        fill(slot, callback);
        fill(slot, null); // the next lap, a MEMORY send without a callback
        assertThat(slot.takeCallback()).as("the previous lap's callback is not run again").isNull();

        fill(slot, callback);
        slot.cancel();
        assertThat(slot.takeCallback()).as("a cancelled slot's sender was told at its claim").isNull();
    }

    @Test
    void aBatchSlotLetsGoOfItsCallbackOnceItRan() {
        SendCallback request = (partition, offset, error) -> { };
        RingSlot slot = new RingSlot();
        slot.fillBatch("t", 0, null, 0, 0, 3, Acks.JOURNAL, request);
        assertThat(slot.takeCallback()).isSameAs(request);
        assertThat(slot.callback).as("a network request's callback is not held for a lap of the ring").isNull();
        assertThat(slot.takeCallback()).isNull();
    }
}
