"""People and teams: users log in with their email; teams own everything else."""

from importlib import import_module
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models
from django.db.models.functions import Lower


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create(self, email: str, password: str | None, **fields: object) -> "User":
        if not email:
            raise ValueError("email is required")
        user = self.model(email=self.normalize_email(email).lower(), **fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **fields: object) -> "User":
        fields.setdefault("is_staff", False)
        fields.setdefault("is_superuser", False)
        return self._create(email, password, **fields)

    def create_superuser(self, email: str, password: str | None = None, **fields: object) -> "User":
        fields.update(is_staff=True, is_superuser=True)
        return self._create(email, password, **fields)

    def get_by_natural_key(self, username: str | None) -> "User":
        # Addresses are stored in lower case; people type them as they like. Text longer
        # than an address is no one's (and a pattern too long for SQLite's LIKE): the
        # log-in form does not bound what it passes on.
        if len(username or "") > (self.model._meta.get_field("email").max_length or 254):
            raise self.model.DoesNotExist
        return self.get(email__iexact=username or "")


class User(AbstractUser):
    """A person. The email address is the login; there is no separate username."""

    username = None  # type: ignore[assignment]  # drops AbstractUser's field; stubs say str
    email = models.EmailField("email address", unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    # Ours makes users by email; django-stubs expects AbstractUser's by-username manager.
    objects: ClassVar[UserManager] = UserManager()  # type: ignore[assignment]

    # The person's memberships with their teams, set when the session read them with the
    # person (sessions.py); absent on a user loaded otherwise, so read with getattr.
    loaded_memberships: "list[Membership]"

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("email"), name="user_email_unique_ignoring_case"),
        ]

    def __str__(self) -> str:
        return self.email


class Team(models.Model):
    name = models.CharField(max_length=120, unique=True)
    # The finished evaluation every other evaluation of the team is compared against.
    baseline_evaluation = models.ForeignKey(
        "evaluations.Evaluation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The zone its schedules' times are read in (an IANA name: "Europe/Paris").
    time_zone = models.CharField(max_length=64, default="UTC", db_default="UTC")
    # Members sign in through the identity provider only; the owner keeps a password as
    # the way back in (apps/accounts/forms.py LoginForm).
    sso_required = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Tag(models.Model):
    """A team-scoped label. A grader sees an evaluation only when holding all its tags."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="tags")
    name = models.CharField(max_length=60)
    colour = models.CharField(max_length=7, default="#6b7280", help_text="#rrggbb")

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="tag_unique_name_per_team"),
        ]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    EVALUATOR = "evaluator", "Evaluator"


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.EVALUATOR)
    tags = models.ManyToManyField(Tag, blank=True, related_name="members")
    # Given by a single sign-on rule (apps/sso): its role follows the provider's groups
    # at every sign-in, and it goes when no rule gives it any more. One made by hand
    # (an invitation, the owner) is never touched by the rules.
    granted_by_rule = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team", "user__email"]
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="membership_once_per_team"),
            models.UniqueConstraint(
                fields=["team"],
                condition=models.Q(role="owner"),
                name="membership_one_owner_per_team",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    @property
    def can_manage(self) -> bool:
        return self.role in (Role.OWNER, Role.ADMIN)


class Invitation(models.Model):
    """A lead invites someone by email; the link in the email lets them join the team.

    Only a hash of the token is stored, so a database leak does not leak valid links.
    """

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.EVALUATOR)
    tags = models.ManyToManyField(Tag, blank=True, related_name="+")
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation of {self.email} to {self.team}"


class ApiToken(models.Model):
    """A named bearer token for integrations; it acts for its team, never another.

    The secret is shown once, at creation; only its SHA-256 is stored. `prefix` (public,
    part of the token) finds the row without scanning every hash.
    """

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"],
                condition=models.Q(revoked_at__isnull=True),
                name="api_token_live_name_once_per_team",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.team})"


class Session(AbstractBaseSession):
    """A login session, as Django's database sessions keep it, that also names the person
    it logs in: the session and the person come back from one statement (sessions.py).

    The person is filled in whenever the session is saved; Django's checks still read the
    person's id from the signed session data, and use the row read with the session only
    when the two agree.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.CASCADE, related_name="+"
    )

    @classmethod
    def get_session_store_class(cls) -> type[SessionBase]:
        # The store named by SESSION_ENGINE (sessions.py), found by name as Django finds
        # it: the store imports this model, so importing it here would make a circle.
        return import_module(settings.SESSION_ENGINE).SessionStore
