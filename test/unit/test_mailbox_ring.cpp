// The mailbox rings (formats/mailbox_ring.c) without MPI: which process
// writes which ring, order, a full
// ring, wrap-around, malformed stamps written by a misbehaving peer, and one
// sender and one owner in two threads exchanging 10^6 messages.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "mailbox_ring.h"

namespace {

struct Box {
    std::vector<uint64_t> words;
    nbrma_mailbox_t *box;
    explicit Box(int senders) : words(nbrma_mailbox_bytes(senders) / 8, 0)
    {
        box = reinterpret_cast<nbrma_mailbox_t *>(words.data());
    }
};

nbrma_ring_msg_t msg_of(uint64_t value, uint8_t kind = 3, uint8_t arg = 235)
{
    nbrma_ring_msg_t m{};
    m.kind = kind;
    m.arg = arg;
    m.value = value;
    return m;
}

bool send(nbrma_mailbox_t *box, nbrma_ring_t *ring, nbrma_ring_sender_t *s, const nbrma_ring_msg_t &m)
{
    return nbrma_ring_send(box, ring, s, &m);
}

}  // namespace

// A mailbox has one ring per process of its node, in rank order, and none for
// the processes of other nodes: every process of a node agrees on each
// one's ring (each computes it from the same node ids), and no two share one.
TEST(MailboxRing, RingsBelongToTheProcessesOfTheNodeInRankOrder)
{
    const int node_of[] = {7, 3, 7, 7, 3, -1, 7};
    int ring_of[7];

    EXPECT_EQ(nbrma_mailbox_rings(node_of, 7, 7, ring_of), 4);
    EXPECT_EQ(std::vector<int>(ring_of, ring_of + 7), (std::vector<int>{0, -1, 1, 2, -1, -1, 3}));
    EXPECT_EQ(nbrma_mailbox_rings(node_of, 7, 3, ring_of), 2);
    EXPECT_EQ(std::vector<int>(ring_of, ring_of + 7), (std::vector<int>{-1, 0, -1, -1, 1, -1, -1}));
    EXPECT_EQ(nbrma_mailbox_rings(node_of, 7, -1, ring_of), 1);   // a spawned process: alone
    EXPECT_EQ(ring_of[5], 0);
    EXPECT_EQ(nbrma_mailbox_rings(node_of, 0, 7, ring_of), 0);
    // 20 processes of a node: the mailbox still fits in one page
    EXPECT_LE(nbrma_mailbox_bytes(20), 4096u);
}

TEST(MailboxRing, MessagesArriveInOrderWithKindAndArg)
{
    Box b(3);
    nbrma_ring_sender_t s{};
    nbrma_ring_msg_t got{};

    EXPECT_EQ(nbrma_mailbox_doorbell(b.box), 0u);
    EXPECT_EQ(nbrma_ring_receive(&b.box->ring[1], &got), NBRMA_RING_EMPTY);
    for (uint64_t v = 1; v <= 5; v++)
        ASSERT_TRUE(send(b.box, &b.box->ring[1], &s, msg_of(v * 7, uint8_t(v), 234)));
    EXPECT_EQ(nbrma_mailbox_doorbell(b.box), 5u);
    EXPECT_EQ(nbrma_ring_receive(&b.box->ring[0], &got), NBRMA_RING_EMPTY);
    EXPECT_EQ(nbrma_ring_receive(&b.box->ring[2], &got), NBRMA_RING_EMPTY);
    for (uint64_t v = 1; v <= 5; v++) {
        ASSERT_EQ(nbrma_ring_receive(&b.box->ring[1], &got), NBRMA_RING_MESSAGE);
        EXPECT_EQ(got.value, v * 7);
        EXPECT_EQ(got.kind, v);
        EXPECT_EQ(got.arg, 234);
    }
    EXPECT_EQ(nbrma_ring_receive(&b.box->ring[1], &got), NBRMA_RING_EMPTY);
}

TEST(MailboxRing, AFullRingRefusesUntilTheOwnerReads)
{
    Box b(1);
    nbrma_ring_sender_t s{};
    nbrma_ring_msg_t got{};
    nbrma_ring_t *ring = &b.box->ring[0];

    for (uint64_t v = 0; v < NBRMA_RING_SLOTS; v++)
        ASSERT_TRUE(send(b.box, ring, &s, msg_of(v)));
    EXPECT_FALSE(send(b.box, ring, &s, msg_of(99)));
    EXPECT_EQ(s.sent, uint64_t(NBRMA_RING_SLOTS));   // nothing written
    ASSERT_EQ(nbrma_ring_receive(ring, &got), NBRMA_RING_MESSAGE);
    EXPECT_EQ(got.value, 0u);
    ASSERT_TRUE(send(b.box, ring, &s, msg_of(100)));
    for (uint64_t v = 1; v < NBRMA_RING_SLOTS; v++) {
        ASSERT_EQ(nbrma_ring_receive(ring, &got), NBRMA_RING_MESSAGE);
        EXPECT_EQ(got.value, v);
    }
    ASSERT_EQ(nbrma_ring_receive(ring, &got), NBRMA_RING_MESSAGE);
    EXPECT_EQ(got.value, 100u);
    EXPECT_EQ(nbrma_ring_receive(ring, &got), NBRMA_RING_EMPTY);   // after wrap-around
}

TEST(MailboxRing, StampsNoSenderWritesAreMalformedAndNotApplied)
{
    Box b(1);
    nbrma_ring_t *ring = &b.box->ring[0];
    nbrma_ring_msg_t got{};

    ring->slot[0].stamp = uint64_t(5) << 16;   // message 4 where 0 is due
    EXPECT_EQ(nbrma_ring_receive(ring, &got), NBRMA_RING_MALFORMED);
    EXPECT_EQ(ring->consumed, 0u);
    ring->slot[0].stamp = uint64_t(1) << 16 | 2 << 8;
    ASSERT_EQ(nbrma_ring_receive(ring, &got), NBRMA_RING_MESSAGE);
    EXPECT_EQ(got.kind, 2);
}

// Random bytes in a ring are never read outside it and never taken unless a
// stamp names the message due.
TEST(MailboxRing, RandomRingContentsAreSafe)
{
    std::mt19937_64 rng(12345);
    for (int round = 0; round < 100000; round++) {
        Box b(1);
        nbrma_ring_t *ring = &b.box->ring[0];
        uint64_t start = rng() % 1000;
        ring->consumed = start;
        for (auto &slot : ring->slot) {
            slot.value = rng();
            slot.stamp = rng() % 3 == 0 ? (start + 1 + rng() % 40) << 16 | (rng() & 0xffff) : rng();
        }
        nbrma_ring_msg_t got{};
        int taken = 0, rc;
        while ((rc = nbrma_ring_receive(ring, &got)) == NBRMA_RING_MESSAGE) {
            const nbrma_ring_slot_t &slot = ring->slot[(start + taken) % NBRMA_RING_SLOTS];
            ASSERT_EQ(slot.stamp >> 16, start + taken + 1);
            ASSERT_EQ(got.value, slot.value);
            ASSERT_LE(++taken, NBRMA_RING_SLOTS);
        }
        ASSERT_EQ(ring->consumed, start + taken);
    }
}

// One sender thread, one owner thread: every message exactly once, in order;
// a full ring makes the sender retry (the glue sends by message instead).
TEST(MailboxRing, TwoThreadsExchangeAMillionMessages)
{
    const uint64_t n = std::getenv("NBRMA_SCALE_EPOCHS") ? 10000 : 1000000;
    Box b(2);
    nbrma_ring_t *ring = &b.box->ring[1];
    uint64_t refused = 0;

    std::thread sender([&] {
        nbrma_ring_sender_t s{};
        for (uint64_t v = 0; v < n;)
            if (send(b.box, ring, &s, msg_of(v * 3 + 1, uint8_t(v % 6), 0)))
                v++;
            else
                refused++;
    });
    uint64_t expect = 0;
    uint64_t seen_bell = 0;
    while (expect < n) {
        uint64_t bell = nbrma_mailbox_doorbell(b.box);
        if (bell == seen_bell)
            continue;
        seen_bell = bell;
        nbrma_ring_msg_t got{};
        int rc;
        while ((rc = nbrma_ring_receive(ring, &got)) == NBRMA_RING_MESSAGE) {
            ASSERT_EQ(got.value, expect * 3 + 1);
            ASSERT_EQ(got.kind, expect % 6);
            expect++;
        }
        ASSERT_EQ(rc, NBRMA_RING_EMPTY);
    }
    sender.join();
    EXPECT_EQ(nbrma_mailbox_doorbell(b.box), n);
    RecordProperty("refused", std::to_string(refused));
}

// The owner sleeps whenever its ring is empty and waits to be woken; the
// sender wakes it when nbrma_mailbox_owner_to_wake says so. No message is
// ever left unread behind a sleeping owner: each sleep ends with a wake-up
// (a lost one would leave the owner waiting until the time limit).
// wakeups: the sender's thread only, read after join.
TEST(MailboxRing, AnAwayOwnerIsWokenForOperationsAnArmedOneForMessagesOnly)
{
    Box b(2);
    // armed: UCX's senders wake it themselves; a ring's sender still does
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP));
    EXPECT_FALSE(nbrma_mailbox_away_owner_to_wake(b.box));
    nbrma_mailbox_unmark_away(b.box);
    EXPECT_EQ(b.box->asleep, NBRMA_MAILBOX_ASLEEP) << "the application leaves an armed mark";
    EXPECT_TRUE(nbrma_mailbox_owner_to_wake(b.box, false));
    // away: the first operation's sender wakes it, the next does not
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP_AWAY));
    EXPECT_TRUE(nbrma_mailbox_away_owner_to_wake(b.box));
    EXPECT_FALSE(nbrma_mailbox_away_owner_to_wake(b.box));
    EXPECT_FALSE(nbrma_mailbox_owner_to_wake(b.box, false));
    // away: a ring's sender wakes it as well
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP_AWAY));
    EXPECT_TRUE(nbrma_mailbox_owner_to_wake(b.box, false));
    EXPECT_FALSE(nbrma_mailbox_away_owner_to_wake(b.box));
    // the application back in MPI takes an away mark back
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP_AWAY));
    nbrma_mailbox_unmark_away(b.box);
    EXPECT_FALSE(nbrma_mailbox_away_owner_to_wake(b.box));
    EXPECT_FALSE(nbrma_mailbox_owner_to_wake(b.box, false));
}

// An agent with no work of its own in flight sleeps for its peers only: a
// grant, a done or a fence arrival (its application's own synchronization,
// which its next MPI call completes) leaves the mark in place, a message that
// serves its sender takes it and wakes the owner once. The application,
// starting work of its own, turns the mark into one for every message.
TEST(MailboxRing, AnOwnerAsleepForPeersIsWokenOnlyForWhatServesAPeer)
{
    Box b(2);
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP_FOR_PEERS));
    EXPECT_FALSE(nbrma_mailbox_owner_to_wake(b.box, false));
    EXPECT_FALSE(nbrma_mailbox_owner_to_wake(b.box, false));
    EXPECT_EQ(b.box->asleep, NBRMA_MAILBOX_ASLEEP_FOR_PEERS) << "left for the next sender";
    EXPECT_FALSE(nbrma_mailbox_away_owner_to_wake(b.box)) << "UCX wakes an armed sleep itself";
    EXPECT_TRUE(nbrma_mailbox_owner_to_wake(b.box, true));
    EXPECT_FALSE(nbrma_mailbox_owner_to_wake(b.box, true)) << "one wake-up";
    // work of its own begins: every message wakes it from now on
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP_FOR_PEERS));
    EXPECT_TRUE(nbrma_mailbox_wake_for_all(b.box));
    EXPECT_FALSE(nbrma_mailbox_wake_for_all(b.box)) << "once";
    EXPECT_TRUE(nbrma_mailbox_owner_to_wake(b.box, false));
    // other marks and none are left as they are
    EXPECT_FALSE(nbrma_mailbox_wake_for_all(b.box));
    EXPECT_EQ(b.box->asleep, 0u);
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP_AWAY));
    EXPECT_FALSE(nbrma_mailbox_wake_for_all(b.box));
    EXPECT_EQ(b.box->asleep, NBRMA_MAILBOX_ASLEEP_AWAY);
    // an armed sleep for all is woken by any message, as before
    ASSERT_TRUE(nbrma_mailbox_sleep(b.box, 0, NBRMA_MAILBOX_ASLEEP));
    EXPECT_TRUE(nbrma_mailbox_owner_to_wake(b.box, false));
}

TEST(MailboxRing, NoMessageIsLeftBehindASleepingOwner)
{
    const uint64_t n = std::getenv("NBRMA_SCALE_EPOCHS") ? 2000 : 100000;
    Box b(2);
    nbrma_ring_t *ring = &b.box->ring[1];
    std::atomic<int> woken{0};
    uint64_t sleeps = 0, wakeups = 0;

    std::thread sender([&] {
        nbrma_ring_sender_t s{};
        for (uint64_t v = 0; v < n;) {
            if (!send(b.box, ring, &s, msg_of(v, 1, 0)))
                continue;
            v++;
            if (nbrma_mailbox_owner_to_wake(b.box, false)) {
                wakeups++;
                woken.store(1);
            }
            for (int spin = int(v % 97); spin > 0; spin--)
                std::atomic_signal_fence(std::memory_order_seq_cst);
        }
    });
    uint64_t expect = 0, seen_bell = 0;
    while (expect < n) {
        seen_bell = nbrma_mailbox_doorbell(b.box);
        nbrma_ring_msg_t got{};
        while (nbrma_ring_receive(ring, &got) == NBRMA_RING_MESSAGE)
            ASSERT_EQ(got.value, expect++);
        if (expect == n || !nbrma_mailbox_sleep(b.box, seen_bell, NBRMA_MAILBOX_ASLEEP))
            continue;
        sleeps++;
        const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!woken.load())
            ASSERT_LT(std::chrono::steady_clock::now(), limit)
                << "asleep with " << expect << " of " << n << " messages read: a lost wake-up";
        woken.store(0);
        nbrma_mailbox_awake(b.box);
    }
    sender.join();
    EXPECT_GT(sleeps, 0u);
    // a sender may also take the wish of a sleep that failed (messages came):
    // a spurious wake-up, harmless
    EXPECT_GE(wakeups, sleeps);
}
