"""A CrewAI flow keeps its state in a helix-agents store and waits for a person across processes.

``python examples/crewai_flow.py [STORE]`` (a SQLite file path or a store URL; default
``./helix-crewai.db``). Offline: plain flow methods, no LLM. Three processes share the
store, as three machines would:

1. this one runs the flow: ``write`` saves the state, then ``review`` asks for a human's
   feedback and the flow pauses (its state and the request are in the store);
2. a second process lists the flows waiting for feedback and decides one: a second
   decision is refused as already resolved;
3. a third process (a restart) rebuilds the flow from the store and resumes it with the
   decided feedback; ``publish`` runs on the saved state.

Needs ``pip install helix-agents-crewai helix-agents-store-sqlite``
(docs/integrations/crewai.md).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from crewai.flow.async_feedback.types import HumanFeedbackPending, PendingFeedbackContext
from crewai.flow.flow import Flow, FlowState, listen, start
from crewai.flow.human_feedback import HumanFeedbackResult, human_feedback
from crewai.flow.persistence import persist
from pydantic import Field

from helix_agents.crewai import HelixFlowPersistence


class Draft(FlowState):
    """The flow's state: what it wrote and the steps it went through."""

    text: str = ""
    steps: list[str] = Field(default_factory=list)


class AskLater:
    """A feedback provider that pauses the flow: the answer comes from another process."""

    def request_feedback(self, context: PendingFeedbackContext, flow: Flow[Any]) -> str:
        """Pause: CrewAI saves the request through the flow's persistence."""
        raise HumanFeedbackPending(context=context)


def review_flow(persistence: HelixFlowPersistence) -> type[Flow[Draft]]:
    """The flow class, persisting through ``persistence``."""

    @persist(persistence)
    class ReviewFlow(Flow[Draft]):
        @start()
        def write(self) -> None:
            self.state.text = "Helix keeps CrewAI flows"
            self.state.steps.append("write")

        @listen(write)
        @human_feedback(message="Publish this draft?", provider=AskLater(), llm=None)
        def review(self) -> str:
            self.state.steps.append("review")
            return str(self.state.text)

        @listen(review)
        def publish(self, result: HumanFeedbackResult) -> str:
            self.state.steps.append(f"publish ({result.feedback})")
            return f"published: {self.state.text}"

    return ReviewFlow


def run(store: str) -> str:
    """Process 1: run the flow until it waits for feedback; the flow's id."""
    with HelixFlowPersistence(store) as persistence:
        flow = review_flow(persistence)(suppress_flow_events=True)
        outcome = flow.kickoff()
        assert isinstance(outcome, HumanFeedbackPending), outcome
        print(f"paused at {outcome.context.method_name!r}: {persistence.load_state(flow.flow_id)}")
        return flow.flow_id


def decide(store: str) -> None:
    """Process 2: list what waits for feedback, decide it, then try again."""
    with HelixFlowPersistence(store) as persistence:
        [flow_id] = persistence.pending_flows()
        [asked] = persistence.pending_feedback(flow_id)
        print(f"waiting: {asked.input}")
        print("decide:", persistence.decide_feedback(flow_id, asked.approval_id, "ship it"))
        print("decide again:", persistence.decide_feedback(flow_id, asked.approval_id, "no"))


def resume(store: str, flow_id: str) -> None:
    """Process 3: a restart rebuilds the flow from the store and resumes it."""
    with HelixFlowPersistence(store) as persistence:
        feedback = persistence.decided_feedback(flow_id)
        assert feedback is not None
        flow = review_flow(persistence).from_pending(
            flow_id, persistence, suppress_flow_events=True
        )
        print("resumed:", flow.resume(feedback))
        print("state:", persistence.load_state(flow_id))
        print("still pending:", persistence.pending_flows())


def main(argv: list[str]) -> None:
    """Run the three processes in turn, or one of them (``--decide``, ``--resume ID``)."""
    target = argv[0] if argv else "helix-crewai.db"
    store = target if "://" in target else f"sqlite:///{target}"
    if argv[1:2] == ["--decide"]:
        decide(store)
    elif argv[1:2] == ["--resume"]:
        resume(store, argv[2])
    else:
        flow_id = run(store)
        for step in (["--decide"], ["--resume", flow_id]):
            subprocess.run([sys.executable, __file__, target, *step], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
