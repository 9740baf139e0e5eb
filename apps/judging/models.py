# The grader's queue works on evaluations.FeedbackSlot and evaluations.SnapshotSkip;
# this app holds the rules and pages of judging, not tables of its own.
