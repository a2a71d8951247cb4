# answers.md grading (grader/answers.c, grader/questions.c), tested from files
# alone: no lab is run. Included by tests/tests.mk (the grader's build rules,
# GRADER_SRCS and friends, come from mk/grader.mk).
#   make test-grader-answers

.PHONY: test-grader-answers

build/host/grader-answers-test: $(call grader_objs,grader/tests/test_answers.c $(filter-out grader/main.c,$(GRADER_SRCS)))
	@mkdir -p $(@D); $(CC) $(GRADER_CFLAGS) $^ $(GRADER_LIBS) -o $@

test-grader-answers: build/host/grader-answers-test ## answers.md grading: parser, run.txt, references, one wrong answer each
	@build/host/grader-answers-test
