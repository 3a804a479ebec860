"""A forward's result kept on the instance by one method and read by another: an agent's
`act` keeps the value it estimated (`self.q_history.append(q.max())`, `self.last_q = q`)
and `report` only logs it. The graph of every kept value stays alive for nothing (issue
"Generalise": values followed through attributes of objects across methods)."""

from __future__ import annotations

from test_project import findings, write

AGENT = """
    import torch
    from torch import nn


    class QNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)


    class Agent:
        def __init__(self):
            self.net = QNet()
            self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
            self.q_history = []
            self.last_q = None

        def act(self, s):
            q = self.net(s)
            KEEP
            return q.argmax().item()

        READ
"""

LOGGED = """def report(self):
            print(torch.stack(self.q_history).mean().item())
            self.q_history = []"""


def agent(keep: str, read: str) -> str:
    return AGENT.replace("KEEP", keep).replace("READ", read)


def test_a_value_kept_in_a_list_of_the_instance_and_only_logged_is_thrown_away(tmp_path):
    write(tmp_path, {"agent.py": agent("self.q_history.append(q.max())", LOGGED)})
    assert findings(tmp_path / "agent.py") == [(22, "GL012")]


def test_a_value_kept_in_an_attribute_and_only_logged_is_thrown_away(tmp_path):
    read = """def report(self):
            print(float(self.last_q.max()))"""
    write(tmp_path, {"agent.py": agent("self.last_q = q", read)})
    assert findings(tmp_path / "agent.py") == [(22, "GL012")]


def test_a_kept_value_that_a_later_method_backpropagates_is_used(tmp_path):
    read = """def learn(self):
            loss = torch.stack(self.q_history).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.q_history = []"""
    write(tmp_path, {"agent.py": agent("self.q_history.append(q.max())", read)})
    assert findings(tmp_path / "agent.py") == []


def test_a_kept_value_a_method_hands_back_goes_to_its_callers(tmp_path):
    read = """def latest(self):
            return self.last_q"""
    write(tmp_path, {"agent.py": agent("self.last_q = q", read)})
    assert findings(tmp_path / "agent.py") == []


def test_an_attribute_another_file_reads_may_keep_the_graph_for_it(tmp_path):
    write(
        tmp_path,
        {
            "agent.py": agent("self.q_history.append(q.max())", LOGGED),
            "train.py": "from agent import Agent\nagent = Agent()\nagent.q_history[-1].backward()\n",
        },
    )
    assert findings(tmp_path / "agent.py") == []


def test_an_attribute_of_another_object_of_the_file_is_not_the_instance_s(tmp_path):
    read = (
        LOGGED
        + """

    def peek(agent):
        return agent.q_history"""
    )
    write(tmp_path, {"agent.py": agent("self.q_history.append(q.max())", read)})
    assert findings(tmp_path / "agent.py") == []


def test_a_buffer_object_with_an_append_keeps_the_value_its_own_way(tmp_path):
    text = agent("self.q_history.append(q.max())", LOGGED).replace(
        "self.q_history = []", "self.q_history = Buffer()", 1
    )
    text += """

    class Buffer(list):
        pass
"""
    write(tmp_path, {"agent.py": text})
    assert findings(tmp_path / "agent.py") == []


def test_a_class_that_reads_attributes_by_a_computed_name_is_not_followed(tmp_path):
    read = (
        LOGGED
        + """

        def dump(self, key):
            return getattr(self, key)"""
    )
    write(tmp_path, {"agent.py": agent("self.q_history.append(q.max())", read)})
    assert findings(tmp_path / "agent.py") == []


def test_the_search_for_other_readers_of_the_attribute_is_a_dependency(tmp_path):
    """A cached finding is stale once another file of the project reads the attribute."""
    from gradlint.analysis import project
    from gradlint.config import Config
    from gradlint.engine import lint_source

    write(tmp_path, {"agent.py": agent("self.q_history.append(q.max())", LOGGED)})
    path = tmp_path / "agent.py"
    dependencies: dict[str, str] = {}
    lint_source(path.read_text(encoding="utf-8"), str(path), Config(), dependencies=dependencies)
    assert any(key.startswith(project.READERS_PREFIX) for key in dependencies)
    assert project.dependencies_unchanged(dependencies)
    write(tmp_path, {"plot.py": "from agent import Agent\nprint(Agent().q_history)\n"})
    assert project.affected_by(dependencies, str(tmp_path / "plot.py"))
    assert not project.dependencies_unchanged(dependencies)


# Each a way the kept value may still be read with its graph (found by a review of the
# first version): nothing is reported.
PROPERTY = (
    LOGGED
    + """

        @property
        def q_history(self):
            return self._q

        @q_history.setter
        def q_history(self, value):
            self._q = value"""
)

READ_BY_A_FUNCTION = (
    LOGGED
    + """


    def learn_from(agent, name):
        getattr(agent, name)[-1].backward()"""
)

READ_THROUGH_THE_DICT = (
    LOGGED
    + """


    def learn_from(agent):
        agent.__dict__["q_history"][-1].backward()"""
)


def test_what_else_may_read_the_kept_value_keeps_it_silent(tmp_path):
    cases = {
        "a property of that name": agent("self.q_history.append(q.max())", PROPERTY),
        "getattr in the file": agent("self.q_history.append(q.max())", READ_BY_A_FUNCTION),
        "the instance's __dict__": agent("self.q_history.append(q.max())", READ_THROUGH_THE_DICT),
        "a base class outside torch": agent("self.q_history.append(q.max())", LOGGED).replace(
            "class Agent:", "class Agent(Base):"
        )
        + "\n\n    class Base:\n        pass\n",
        "a list handed in and added to": agent("self.q_history += [q.max()]", LOGGED).replace(
            "self.q_history = []", "self.q_history = handed", 1
        ),
        "a tensor's add is a read": agent(
            "self.last_q = q",
            """def learn(self, bias, target):
            loss = (self.last_q.add(bias) - target).pow(2).mean()
            loss.backward()""",
        ),
    }
    for case, text in cases.items():
        write(tmp_path, {"agent.py": text})
        assert findings(tmp_path / "agent.py") == [], case


def test_a_class_attribute_of_that_name_is_shared_not_the_instance_s_own(tmp_path):
    """`q_history = SHARED` in the class body (or a dataclass field): the list may be
    one that others hold and backpropagate."""
    text = (
        agent("self.q_history.append(q.max())", LOGGED)
        .replace("class Agent:", "class Agent:\n        q_history = SHARED\n", 1)
        .replace("self.q_history = []\n            self.last_q", "self.last_q", 1)
    )
    write(tmp_path, {"agent.py": text.replace("import torch", "import torch\n    SHARED = []", 1)})
    assert "self.q_history = []\n            self.last_q" not in text
    assert findings(tmp_path / "agent.py") == []


def test_another_file_reading_the_attribute_by_name_keeps_it_silent(tmp_path):
    reader = 'from agent import Agent\na = Agent()\ngetattr(a, "q_history")[-1].backward()\n'
    write(
        tmp_path,
        {"agent.py": agent("self.q_history.append(q.max())", LOGGED), "train.py": reader},
    )
    assert findings(tmp_path / "agent.py") == []


def test_a_list_the_class_adds_to_with_plus_equals_is_followed(tmp_path):
    write(tmp_path, {"agent.py": agent("self.q_history += [q.max()]", LOGGED)})
    assert findings(tmp_path / "agent.py") == [(22, "GL012")]


def test_a_list_kept_on_the_instance_is_memory_that_grows_with_the_run(tmp_path):
    """Every call's graph stays alive in the list until the class empties it: a leak,
    not a bounded waste; a value replaced on each call is the waste of one call."""
    from gradlint.engine import lint_file

    write(tmp_path, {"agent.py": agent("self.q_history.append(q.max())", LOGGED)})
    (finding,) = lint_file(tmp_path / "agent.py").diagnostics
    assert finding.group.value == "leak"
    assert "stays alive in `self.q_history`" in finding.message
    assert ("kept here, with its graph, across calls", 23) in [
        (r.message, r.start.line) for r in finding.related
    ]
    read = """def report(self):
            print(float(self.last_q.max()))"""
    write(tmp_path, {"agent.py": agent("self.last_q = q", read)})
    (finding,) = lint_file(tmp_path / "agent.py").diagnostics
    assert finding.group.value == "waste"
