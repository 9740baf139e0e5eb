from django.contrib import admin

from .models import SearchEndpoint, SearchModel


@admin.register(SearchEndpoint)
class SearchEndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "method", "url", "timeout_seconds"]
    list_filter = ["team", "method"]
    search_fields = ["name", "url"]
    exclude = ["headers"]  # often credentials, kept encrypted: edited on the endpoint's page


@admin.register(SearchModel)
class SearchModelAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "endpoint", "body_type"]
    list_filter = ["team"]
    search_fields = ["name"]
    raw_id_fields = ["endpoint"]
    exclude = ["headers"]  # as the endpoint's
