"""The judge form. It only types the input; every rule is the service's (validation.py),
whose problems are put back next to their fields."""

from collections.abc import Iterable
from typing import Any

from django import forms

from .panels import MEMBERS_MAX
from .providers import Protocol

PROTOCOL_CHOICES = [
    (
        Protocol.OPENAI.value,
        "OpenAI-compatible (OpenAI, Azure, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter)",
    ),
    (Protocol.ANTHROPIC.value, "Anthropic"),
]


class JudgeForm(forms.Form):
    name = forms.CharField(required=False)
    protocol = forms.ChoiceField(choices=PROTOCOL_CHOICES, label="Provider")
    base_url = forms.CharField(
        required=False,
        label="Base URL",
        help_text="e.g. https://api.openai.com/v1, http://localhost:11434/v1 (Ollama), "
        "https://api.anthropic.com",
    )
    model_name = forms.CharField(required=False, label="Model", help_text="e.g. gpt-4o-mini")
    api_key = forms.CharField(
        required=False,
        label="API key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted; never shown again. Leave empty to keep the stored key.",
    )
    temperature = forms.CharField(required=False, help_text="0 to 2; empty: the provider's default")
    samples = forms.CharField(
        required=False,
        label="Samples per call",
        initial="1",
        help_text="1 to 10. Above 1, asks the model that many times at the temperature and "
        "keeps the grade given most often; the share that agreed becomes the grade's "
        "agreement. Costs that many times as much, and needs a temperature above 0.",
    )
    timeout_seconds = forms.CharField(label="Timeout (s)", initial="60")
    results_per_call = forms.CharField(label="Results per call", initial="10", help_text="1 to 20")
    calls_at_once = forms.CharField(label="Calls at once", initial="4", help_text="1 to 32")
    max_output_tokens = forms.CharField(label="Most output tokens", initial="2000")
    prompt = forms.ChoiceField(
        required=False,
        help_text="The default prompt of the evaluation's scale, or one of the team's prompts "
        "(a run keeps the version it started with).",
    )
    structured_output = forms.BooleanField(
        required=False,
        initial=True,
        label="Ask for JSON by schema",
        help_text="Turn off for a server that refuses response_format.",
    )
    sees_images = forms.BooleanField(
        required=False,
        initial=False,
        label="Show it the results' images",
        help_text="For a model that takes images: each result's image goes with its text "
        "(read by Relevo, at most 5 MB, PNG, JPEG, GIF or WebP).",
    )
    budget_calls = forms.CharField(required=False, label="Budget: calls per run")
    budget_tokens = forms.CharField(required=False, label="Budget: tokens per run")
    budget_cost = forms.CharField(required=False, label="Budget: cost per run (US$)")
    price_input_per_million = forms.CharField(
        label="Price per million input tokens (US$)", initial="0"
    )
    price_output_per_million = forms.CharField(
        label="Price per million output tokens (US$)", initial="0"
    )
    price_cached_input_per_million = forms.CharField(
        required=False,
        label="Price per million cached input tokens (US$)",
        help_text="What the provider charges for input read from its prompt cache; empty: "
        "the input price.",
    )

    def __init__(self, *args: Any, prompts: Iterable[Any] = (), **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        prompt_field = self.fields["prompt"]
        assert isinstance(prompt_field, forms.ChoiceField)
        prompt_field.choices = [("", "Default prompt of the evaluation's scale")] + [
            (str(prompt.id), prompt.name) for prompt in prompts
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # Left empty (or not sent): the judge keeps how often it asks (once, when new).
        if cleaned.get("samples") == "":
            cleaned.pop("samples")
        return cleaned

    @staticmethod
    def initial_for(judge: Any) -> dict[str, Any]:
        fields = [name for name in JudgeForm.base_fields if name not in ("api_key", "prompt")]
        initial = {name: getattr(judge, name) for name in fields}
        initial["prompt"] = judge.prompt_id
        return {name: ("" if value is None else value) for name, value in initial.items()}


class PromptForm(forms.Form):
    """A team prompt: its name and instructions (the service checks both)."""

    name = forms.CharField(required=False)
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 22, "spellcheck": "false"}),
        help_text="The system message. {scale} becomes the grading scale's meanings; the "
        "keyword, its need and notes, the guidelines and the results follow it, delimited, "
        "in every call.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class AssignForm(forms.Form):
    judge = forms.IntegerField()
    # The share of each result's slots the judge fills (JudgeRun.slots_per_result): 1
    # when not given; the service checks it against the evaluation's strategy.
    slots_per_result = forms.IntegerField(required=False)
    # Ticked: not urgent, the run's calls go through the provider's batch interface at
    # half the price (JudgeRun.urgent False).
    not_urgent = forms.BooleanField(required=False)


class MembersField(forms.Field):
    """A panel's members as chosen in its numbered member lists, in their order; a list
    left on "none" is skipped. The service checks how many and which."""

    widget = forms.SelectMultiple  # reads every value sent under the one name, in order

    def to_python(self, value: Any) -> list[str]:
        return [str(chosen) for chosen in value or [] if chosen not in (None, "")]


# What a panel's form shows of its settings as they are stored (its members and rule
# aside).
PANEL_SETTINGS = (
    "name",
    "results_per_call",
    "calls_at_once",
    "budget_calls",
    "budget_tokens",
    "budget_cost",
)
RULE_CHOICES = [
    ("median", "Median: the middle grade (of an even count, the lower of the two middle ones)"),
    ("majority", "Majority: the grade most members gave; a tie is left for people"),
    ("fitted", "Fitted weights: fitted on a calibration of the panel on a gold set"),
]


class PanelForm(forms.Form):
    """A panel: its name, members (judges of one model), rule and what it shares with a
    judge's settings. The service (panels.py) checks it all."""

    name = forms.CharField(required=False)
    members = MembersField(
        required=False,
        help_text="From 2 to 5 of the team's judges of one model, ideally of different "
        "model families. Each is asked about every result, and paid at its own price.",
    )
    rule = forms.CharField(
        required=False,
        initial="median",
        label="How their grades make one",
        widget=forms.RadioSelect(choices=RULE_CHOICES),
    )
    prompt = forms.ChoiceField(
        required=False,
        help_text="What every member is asked with: the default prompt of the evaluation's "
        "scale, or one of the team's prompts.",
    )
    results_per_call = forms.CharField(label="Results per call", initial="10", help_text="1 to 20")
    calls_at_once = forms.CharField(label="Calls at once", initial="4", help_text="1 to 32")
    # Every member's call counts (the form's budget paragraph says so).
    budget_calls = forms.CharField(required=False, label="Budget: calls per run")
    budget_tokens = forms.CharField(required=False, label="Budget: tokens per run")
    budget_cost = forms.CharField(required=False, label="Budget: cost per run (US$)")

    def __init__(
        self,
        *args: Any,
        prompts: Iterable[Any] = (),
        judges: Iterable[Any] = (),
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        prompt_field = self.fields["prompt"]
        assert isinstance(prompt_field, forms.ChoiceField)
        prompt_field.choices = [("", "Default prompt of the evaluation's scale")] + [
            (str(prompt.id), prompt.name) for prompt in prompts
        ]
        # What each member list offers: the team's judges of one model.
        self.member_choices = [
            (str(judge.id), f"{judge.name} ({judge.model_name})") for judge in judges
        ]

    def seats(self) -> list[str]:
        """The member chosen in each of the form's lists (one a member a panel may have,
        "" for none), as sent or as stored."""
        if self.is_bound:
            sent = self.data.getlist("members") if hasattr(self.data, "getlist") else []
            chosen = [str(value) for value in sent if value]
        else:
            chosen = [str(value) for value in self.initial.get("members", [])]
        chosen = chosen[:MEMBERS_MAX]
        return chosen + [""] * (MEMBERS_MAX - len(chosen))

    @staticmethod
    def initial_for(panel: Any) -> dict[str, Any]:
        initial = {name: getattr(panel, name) for name in PANEL_SETTINGS}
        initial["members"] = [member.id for member in panel.members()]
        initial["rule"] = panel.panel_rule
        initial["prompt"] = panel.prompt_id
        return {name: ("" if value is None else value) for name, value in initial.items()}
