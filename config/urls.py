from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

urlpatterns = [
    path("admin/", admin.site.urls),
    # The grader's dashboard takes over "/" once the judging pages exist.
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
]
