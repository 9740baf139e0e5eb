from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from . import lockout
from .models import Membership, Tag, Team, User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    actions = ["unlock_login"]
    list_display = ["email", "first_name", "last_name", "is_staff", "is_active"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups")}),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)

    @admin.action(description="Unlock log-in (forget failed log-ins)", permissions=["change"])
    def unlock_login(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        """Lift a lock-out after too many wrong passwords (apps/accounts/lockout.py), from
        every address. Axes' "Access attempts" page shows who is locked, by address too."""
        forgotten = sum(lockout.unlock(user.email) for user in queryset)
        self.message_user(
            request,
            f"Unlocked {len(queryset)} account(s) ({forgotten} lock-out record(s) removed).",
        )


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    filter_horizontal = ["tags"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "baseline_evaluation", "created_at"]
    search_fields = ["name"]
    raw_id_fields = ["baseline_evaluation"]
    inlines = [MembershipInline]


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "colour"]
    list_filter = ["team"]
    search_fields = ["name"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "team", "role"]
    list_filter = ["team", "role"]
    search_fields = ["user__email", "team__name"]
    autocomplete_fields = ["user"]
