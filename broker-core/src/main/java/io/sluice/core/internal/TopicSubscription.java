package io.sluice.core.internal;

import io.sluice.core.Subscription;
import io.sluice.core.internal.bus.PartitionRing;

import java.util.List;

/** A live subscriber's stages, one per partition ring of its topic. */
final class TopicSubscription implements Subscription {
    private final String name;
    private final List<PartitionRing.SubscriberStage> stages;

    TopicSubscription(String name, List<PartitionRing.SubscriberStage> stages) {
        this.name = name;
        this.stages = List.copyOf(stages);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long delivered() {
        long total = 0;
        for (PartitionRing.SubscriberStage s : stages) {
            total += s.delivered();
        }
        return total;
    }

    /** Stops every stage; each stage's close is idempotent. */
    @Override
    public void close() {
        stages.forEach(PartitionRing.SubscriberStage::close);
    }
}
