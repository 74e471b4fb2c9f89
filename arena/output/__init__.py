"""What results look like to people: the one view model, HTML pages and pictures, publishing a report."""
