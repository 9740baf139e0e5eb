from django import forms

from apps.evaluations.models import Profile, Scale

KIND_CHOICES = [("json", "Evaluation document (JSON)"), ("trec", "TREC run and qrels")]


class ImportForm(forms.Form):
    kind = forms.ChoiceField(choices=KIND_CHOICES, widget=forms.RadioSelect, initial="json")
    document = forms.FileField(required=False, help_text="relevo.evaluation/1 JSON")
    run = forms.FileField(required=False, help_text="qid Q0 docno rank score tag")
    qrels = forms.FileField(required=False, help_text="qid iteration docno grade")
    topics = forms.FileField(required=False, help_text="qid<TAB>keyword text (optional)")
    name = forms.CharField(max_length=200, required=False)
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.GRADED)
    profile = forms.ChoiceField(choices=Profile.choices, initial=Profile.TREC)
    metrics = forms.CharField(
        initial="ndcg@10, precision@5", help_text="metric@k, separated by commas"
    )
    keep_rank = forms.BooleanField(required=False, help_text="keep the run's rank column")

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("kind") == "json" and not data.get("document"):
            self.add_error("document", "Choose the JSON document to import.")
        if data.get("kind") == "trec":
            if not data.get("run"):
                self.add_error("run", "Choose the run file.")
            if not (data.get("name") or "").strip():
                self.add_error("name", "Name the new evaluation.")
            try:
                data["metric_list"] = parse_metrics(data.get("metrics", ""))
            except ValueError as error:
                self.add_error("metrics", str(error))
        return data


def parse_metrics(text: str) -> list[tuple[str, int]]:
    """'ndcg@10, precision@5' -> [("ndcg", 10), ("precision", 5)]."""
    metrics = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        metric, separator, k = part.partition("@")
        if not separator or not k.strip().isdigit():
            raise ValueError(f"{part!r} is not metric@k, e.g. ndcg@10")
        metrics.append((metric.strip(), int(k)))
    if not metrics:
        raise ValueError("name at least one metric, e.g. ndcg@10")
    return metrics
