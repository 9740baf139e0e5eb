from django.urls import path

from . import views

app_name = "judging"

urlpatterns = [
    path("feedback/", views.feedback, name="feedback"),
    path("feedback/previous/", views.previous, name="feedback_previous"),
    path("feedback/slots/<int:slot_id>/grade/", views.grade, name="feedback_grade"),
    path("feedback/slots/<int:slot_id>/skip/", views.skip, name="feedback_skip"),
]
